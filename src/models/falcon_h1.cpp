// Falcon-H1 (falcon_h1): every layer runs Mamba-2 and GQA attention side by side on one normed
// input and adds both to the residual, then a SwiGLU MLP; μP multipliers on the embeddings, the
// keys, each block's input and output, in_proj's five outputs, the MLP's gate and down, and the
// logits.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// A list of `size` multipliers, all 1 when absent or null.
std::vector<float> multipliers(const ConfigReader& config, const std::string& key, size_t size) {
  std::vector<float> values(size, 1.0f);
  if (!config.has(key) || config.json()[key].is_null()) return values;
  const Json& list = config.json()[key];
  if (!list.is_array() || list.size() != size)
    config.reject(key, "must be a list of " + std::to_string(size) + " numbers");
  for (size_t i = 0; i < size; ++i) {
    if (!list[i].is_number()) config.reject(key, "entry " + std::to_string(i) + " is not a number");
    values[i] = list[i].get<float>();
  }
  return values;
}

float multiplier(const ConfigReader& config, const std::string& key) {
  return static_cast<float>(config.number(key, 1.0));
}

DecoderSpec read_falcon_h1(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 128000;
  defaults.intermediate_size = 14336;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 8192;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", false);
  spec.mlp_bias = config.boolean("mlp_bias", false);
  spec.embedding_scale = multiplier(config, "embedding_multiplier");
  spec.logits_scale = multiplier(config, "lm_head_multiplier");
  // The keys times key_multiplier only ever meet the queries: it scales the scores.
  const float key_multiplier = multiplier(config, "key_multiplier");
  if (key_multiplier <= 0) config.reject("key_multiplier", "must be positive");
  spec.attention_scale = key_multiplier / std::sqrt(static_cast<float>(spec.head_dim));
  spec.attention_in_scale = multiplier(config, "attention_in_multiplier");
  spec.attention_out_scale = multiplier(config, "attention_out_multiplier");
  const std::vector<float> mlp = multipliers(config, "mlp_multipliers", 2);
  spec.mlp_gate_scale = mlp[0];
  spec.mlp_down_scale = mlp[1];

  // The Mamba width: mamba_d_ssm (transformers' default 1024), or mamba_expand x hidden_size when null.
  const bool d_ssm_null = config.has("mamba_d_ssm") && config.json()["mamba_d_ssm"].is_null();
  const int64_t inner = d_ssm_null ? config.integer("mamba_expand", 2, 1, 64) * spec.hidden_size
                                   : config.integer("mamba_d_ssm", 1024, 1, int64_t{1} << 20);
  read_mamba(config, spec, inner);
  MambaSpec& m = spec.mamba;
  // in_proj's bias is mamba_proj_bias, out_proj's projectors_bias; canrun has one switch for both.
  if (config.boolean("projectors_bias", false) != m.proj_bias)
    config.reject("projectors_bias", "must equal mamba_proj_bias (" + std::string(m.proj_bias ? "true" : "false") +
                                         "): canrun reads in_proj and out_proj biases together");
  m.gated_norm = config.boolean("mamba_rms_norm", false);
  m.norm_before_gate = config.boolean("mamba_norm_before_gate", true);
  m.in_scale = multiplier(config, "ssm_in_multiplier");
  m.out_scale = multiplier(config, "ssm_out_multiplier");
  const std::vector<float> zxbcdt = multipliers(config, "ssm_multipliers", 5);
  std::copy(zxbcdt.begin(), zxbcdt.end(), m.zxbcdt_scales.begin());

  spec.mixer_kinds.assign(static_cast<size_t>(spec.num_layers), "mamba2_attention");
  spec.ffn_kinds.assign(static_cast<size_t>(spec.num_layers), "dense_mlp");
  WeightNames& n = spec.names;
  n.mamba = "mamba";
  n.mlp_norm = "pre_ff_layernorm";
  n.gate = "feed_forward.gate_proj";
  n.up = "feed_forward.up_proj";
  n.down = "feed_forward.down_proj";
  n.final_norm = "model.final_layernorm";
  return spec;
}

const ArchitectureRegistration kFalconH1(
    {"falcon_h1",
     "Falcon-H1: Mamba-2 and attention side by side in every layer, then a SwiGLU MLP; μP multipliers",
     read_falcon_h1,
     {"mamba_d_ssm (or mamba_expand), mamba_n_heads, mamba_d_head, mamba_n_groups, mamba_d_state, mamba_d_conv",
      "mamba_conv_bias, mamba_proj_bias with projectors_bias, mamba_rms_norm, mamba_norm_before_gate, "
      "time_step_limit",
      "embedding_multiplier, lm_head_multiplier, key_multiplier, attention_in_multiplier, attention_out_multiplier",
      "ssm_in_multiplier, ssm_out_multiplier, ssm_multipliers (z, x, B, C, dt), mlp_multipliers (gate, down)",
      "attention_bias, mlp_bias, tie_word_embeddings, rope default|linear|dynamic|yarn|llama3"},
     {"FalconH1ForCausalLM"}});

}  // namespace
}  // namespace canrun
