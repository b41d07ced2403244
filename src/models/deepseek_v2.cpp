// DeepSeek-V2 / V2-Lite: multi-head latent attention (a low-rank query, keys and values
// expanded from one compressed latent, a rotary part shared by all heads), yarn's mscale on the
// softmax scale; dense MLPs on the first first_k_dense_replace layers, routed experts (greedy or
// group-limited top-k, scaled by routed_scaling_factor) plus shared experts on the others.
#include <cmath>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

constexpr int64_t kMaxWidth = int64_t{1} << 17;

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

void read_experts(const ConfigReader& config, DecoderSpec& spec) {
  MoeKeys keys;
  keys.num_experts = "n_routed_experts";
  keys.num_experts_alias = "num_experts";
  keys.default_experts = 64;
  keys.default_expert_ffn = 1407;
  // transformers' DeepseekV2 router drops norm_topk_prob: the top-k weights are never renormalised.
  keys.always_normalize = false;
  spec.moe = read_moe(config, spec, keys);
  if (spec.moe.num_experts < 1) config.reject("n_routed_experts", "must be at least 1");
  if (!config.has("num_experts_per_tok")) config.reject("num_experts_per_tok", "is required for the expert layers");
  spec.moe.routed_scale = static_cast<float>(config.number("routed_scaling_factor", 1.0));
  spec.moe.shared_ffn = spec.moe.expert_ffn * config.integer("n_shared_experts", 2, 0, 1024);
  const std::string method = config.string("topk_method", std::string("greedy"));
  if (method == "group_limited_greedy") {
    spec.moe.groups = config.integer("n_group", std::nullopt, 1, spec.moe.num_experts);
    if (spec.moe.num_experts % spec.moe.groups != 0)
      config.reject("n_group", "must divide n_routed_experts (" + std::to_string(spec.moe.num_experts) + ")");
    spec.moe.top_k_groups = config.integer("topk_group", std::nullopt, 1, spec.moe.groups);
  } else if (method != "greedy") {
    reject_option(config, "topk_method", "'" + method + "'", "deepseek_v2", "supported: greedy, group_limited_greedy");
  }
  // DeepSeek's own code made only every moe_layer_freq-th layer sparse; transformers ignores the
  // field and makes every layer from first_k_dense_replace on sparse.
  const int64_t frequency = config.integer("moe_layer_freq", 1, 1, 1 << 20);
  if (frequency != 1)
    reject_option(config, "moe_layer_freq", std::to_string(frequency), "deepseek_v2",
                  "transformers makes every layer from first_k_dense_replace on sparse; supported: 1");
}

DecoderSpec read_deepseek_v2(const ConfigReader& config) {
  const int64_t rope_dim = config.integer("qk_rope_head_dim", 64, 2, 8192);
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 102400;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 11008;
  defaults.num_layers = 32;
  defaults.num_heads = 32;
  defaults.max_positions = 2048;
  // transformers' config sets head_dim to qk_rope_head_dim, the width its rotary tables cover.
  defaults.head_dim = rope_dim;
  defaults.head_dim_from_config = false;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  if (spec.hidden_size % spec.num_heads != 0)
    config.reject("hidden_size", "must be divisible by num_attention_heads (" + std::to_string(spec.num_heads) + ")");
  if (spec.num_kv_heads != spec.num_heads)
    reject_option(config, "num_key_value_heads", std::to_string(spec.num_kv_heads), "deepseek_v2",
                  "every head has its own key and value; supported: num_attention_heads");
  if (spec.rope.rotary_dim != rope_dim)
    reject_option(config, "partial_rotary_factor", "a rotary dimension of " + std::to_string(spec.rope.rotary_dim),
                  "deepseek_v2", "the whole qk_rope_head_dim rotates; supported: 1");

  spec.latent_attention = true;
  LatentAttentionSpec& mla = spec.mla;
  // null: the query comes from q_proj; absent: transformers' default rank.
  const bool no_q_lora = config.json().contains("q_lora_rank") && !config.has("q_lora_rank");
  mla.q_lora_rank = no_q_lora ? 0 : config.integer("q_lora_rank", 1536, 1, kMaxWidth);
  mla.kv_lora_rank = config.integer("kv_lora_rank", 512, 1, kMaxWidth);
  mla.nope_dim = config.integer("qk_nope_head_dim", 128, 0, 8192);
  mla.rope_dim = rope_dim;
  mla.value_dim = config.integer("v_head_dim", 128, 1, 8192);
  mla.latent_norm = rms_norm(1e-6f);  // q_a_layernorm and kv_a_layernorm keep the norm's default eps
  spec.head_dim = mla.nope_dim + mla.rope_dim;
  const bool attention_bias = config.boolean("attention_bias", false);
  mla.down_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.attention_scale = softmax_scale(config, spec.rope, spec.head_dim);
  spec.mlp_bias = config.boolean("mlp_bias", false);

  const int64_t first_sparse = config.integer("first_k_dense_replace", 0, 0, 1 << 20);
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), false);
  for (int64_t i = first_sparse; i < spec.num_layers; ++i) spec.moe_layers[i] = true;
  if (first_sparse < spec.num_layers) read_experts(config, spec);
  spec.names.shared_expert = "mlp.shared_experts";
  return spec;
}

const ArchitectureRegistration kDeepseekV2(
    {"deepseek_v2", "DeepSeek-V2: multi-head latent attention, dense then routed + shared experts", read_deepseek_v2,
     {"q_lora_rank (null: q_proj)", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
      "attention_bias", "mlp_bias", "first_k_dense_replace", "n_routed_experts", "num_experts_per_tok",
      "moe_intermediate_size", "n_shared_experts", "routed_scaling_factor",
      "topk_method greedy|group_limited_greedy (n_group, topk_group)",
      "rope default|linear|dynamic|yarn|llama3 (mscale_all_dim scales the softmax)"}});

}  // namespace
}  // namespace canrun
