#include "models/gemma_common.h"

#include <cmath>

#include "models/llama_like.h"

namespace canrun {
namespace {

// An optional soft-cap: the family default when absent, none when null.
float softcap(const ConfigReader& config, const std::string& key, double fallback) {
  if (config.json().contains(key) && !config.has(key)) return 0.0f;
  const double value = config.number(key, fallback);
  if (value < 0) config.reject(key, "must not be negative");
  return static_cast<float>(value);
}

}  // namespace

void apply_gemma_basics(const ConfigReader& config, DecoderSpec& spec) {
  spec.norm = rms_norm(spec.norm_eps, /*unit_offset=*/true);
  spec.qk_norm_spec = spec.norm;
  spec.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(spec.hidden_size)));
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
}

void apply_gemma2_layout(const ConfigReader& config, DecoderSpec& spec, double default_attn_softcap,
                         double default_final_softcap) {
  apply_gemma_basics(config, spec);
  spec.names.post_attn_norm = "post_attention_layernorm";
  spec.names.mlp_norm = "pre_feedforward_layernorm";
  spec.names.post_mlp_norm = "post_feedforward_layernorm";
  const double scalar = config.number("query_pre_attn_scalar", 256);
  if (scalar <= 0) config.reject("query_pre_attn_scalar", "must be positive");
  spec.attention_scale = static_cast<float>(std::pow(scalar, -0.5));
  spec.attn_softcap = softcap(config, "attn_logit_softcapping", default_attn_softcap);
  spec.final_softcap = softcap(config, "final_logit_softcapping", default_final_softcap);
}

void reject_bidirectional_attention(const ConfigReader& config, const DecoderSpec& spec) {
  if (config.boolean("use_bidirectional_attention", false))
    fail(ErrorKind::kUnsupportedOption, config.path() + ": field 'use_bidirectional_attention': true is not "
                                                        "supported for " + spec.model_type + " (causal only)");
}

}  // namespace canrun
