#include "models/latent_decoder.h"

#include <cmath>

#include "models/families_common.h"

namespace canrun {
namespace {

// transformers' yarn_get_mscale.
double yarn_mscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// qk_head_dim^-0.5, times yarn_get_mscale(factor, mscale_all_dim)^2 when the rope parameters
// give mscale_all_dim and the rope type is not default (transformers' yarn_apply_mscale).
float softmax_scale(const ConfigReader& config, const RopeSpec& rope, int64_t qk_head_dim) {
  double scale = std::pow(static_cast<double>(qk_head_dim), -0.5);
  const std::string key = config.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (rope.type != "default" && config.has(key)) {
    const double mscale_all_dim = config.object(key).number("mscale_all_dim", 0.0);
    if (mscale_all_dim != 0) {
      const double mscale = yarn_mscale(rope.factor, mscale_all_dim);
      scale = scale * mscale * mscale;
    }
  }
  return static_cast<float>(scale);
}

}  // namespace

DecoderSpec read_latent_decoder(const ConfigReader& config, LlamaLikeDefaults defaults, const LatentDefaults& latent) {
  const std::string model_type = config.string("model_type", std::nullopt);
  const int64_t rope_dim = config.integer("qk_rope_head_dim", latent.rope_dim, 2, 8192);
  defaults.head_dim = rope_dim;
  defaults.head_dim_from_config = false;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  if (spec.num_kv_heads != spec.num_heads)
    reject_option(config, "num_key_value_heads", std::to_string(spec.num_kv_heads), model_type,
                  "every head has its own key and value; supported: num_attention_heads");
  if (spec.rope.rotary_dim != rope_dim)
    reject_option(config, "partial_rotary_factor", "a rotary dimension of " + std::to_string(spec.rope.rotary_dim),
                  model_type, "the whole qk_rope_head_dim rotates; supported: 1");

  spec.latent_attention = true;
  LatentAttentionSpec& mla = spec.mla;
  // null: the query comes from q_proj; absent: the config class's default rank.
  const bool no_q_lora = config.json().contains("q_lora_rank") && !config.has("q_lora_rank");
  mla.q_lora_rank = no_q_lora ? 0 : config.integer("q_lora_rank", latent.q_lora_rank, 1, kMaxConfigWidth);
  mla.kv_lora_rank = config.integer("kv_lora_rank", latent.kv_lora_rank, 1, kMaxConfigWidth);
  mla.nope_dim = config.integer("qk_nope_head_dim", latent.nope_dim, 0, 8192);
  mla.rope_dim = rope_dim;
  mla.value_dim = config.integer("v_head_dim", latent.value_dim, 1, 8192);
  mla.latent_norm = rms_norm(1e-6f);  // q_a_layernorm and kv_a_layernorm keep the norm's default eps
  spec.head_dim = mla.nope_dim + mla.rope_dim;
  const bool attention_bias = config.boolean("attention_bias", false);
  mla.down_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.attention_scale = softmax_scale(config, spec.rope, spec.head_dim);
  spec.names.shared_expert = "mlp.shared_experts";
  return spec;
}

}  // namespace canrun
