// Hunyuan dense (Tencent HunYuanDenseV1): the Llama layout with per-head q/k RMSNorms
// (query_layernorm, key_layernorm) applied after the rotation, not before. Its checkpoints label
// their rope "dynamic" with an `alpha`, which transformers runs as a fixed NTK stretch of the
// base: theta * alpha^(head_dim / (head_dim - 2)), whatever the sequence length.
#include <cmath>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// The rope entry (rope_parameters, else rope_scaling) when it is "dynamic" with an alpha.
std::optional<double> ntk_alpha(const ConfigReader& config) {
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!config.has(key)) continue;
    const ConfigReader rope = config.object(key);
    const std::string type = rope.string(rope.has("rope_type") ? "rope_type" : "type", std::string("default"));
    if (type != "dynamic" || !rope.has("alpha")) return std::nullopt;
    const double alpha = rope.number("alpha", std::nullopt);
    if (alpha <= 0) rope.reject("alpha", "must be positive");
    return alpha;
  }
  return std::nullopt;
}

DecoderSpec read_hunyuan_v1_dense(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 290943;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_biased_qk_norm_attention(config, spec, QkNorm::kPerHead);
  spec.qk_norm_after_rope = true;
  spec.names.q_norm = "self_attn.query_layernorm";
  spec.names.k_norm = "self_attn.key_layernorm";
  if (const std::optional<double> alpha = ntk_alpha(config)) {
    const auto dim = static_cast<double>(spec.head_dim);
    spec.rope.type = "default";
    spec.rope.factor = 1.0;
    spec.rope.theta *= std::pow(*alpha, dim / (dim - 2));
  }
  return spec;
}

const ArchitectureRegistration kHunyuanV1Dense(
    {"hunyuan_v1_dense", "Hunyuan dense: Llama layout, per-head q/k RMSNorms after the rotation",
     read_hunyuan_v1_dense,
     {"attention_bias", "head_dim", "tie_word_embeddings",
      "rope default|linear|dynamic|yarn|llama3, or dynamic with alpha (a fixed NTK base stretch)"},
     {"HunYuanDenseV1ForCausalLM"}});

}  // namespace
}  // namespace canrun
