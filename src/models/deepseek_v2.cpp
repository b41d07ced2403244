// DeepSeek-V2 / V2-Lite: multi-head latent attention (a low-rank query, keys and values
// expanded from one compressed latent, a rotary part shared by all heads), yarn's mscale on the
// softmax scale; dense MLPs on the first first_k_dense_replace layers, routed experts (greedy or
// group-limited top-k, scaled by routed_scaling_factor) plus shared experts on the others.
#include <algorithm>

#include "models/families_common.h"
#include "models/latent_decoder.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

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
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 102400;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 11008;
  defaults.num_layers = 32;
  defaults.num_heads = 32;
  defaults.max_positions = 2048;
  DecoderSpec spec = read_latent_decoder(config, defaults, LatentDefaults{});
  spec.rope_interleaved = true;  // the rope parts rotate as complex numbers x[2i] + i x[2i+1]
  spec.mlp_bias = config.boolean("mlp_bias", false);
  spec.moe_layers = sparse_from(config, spec.num_layers, 0);
  if (std::find(spec.moe_layers.begin(), spec.moe_layers.end(), true) != spec.moe_layers.end())
    read_experts(config, spec);
  return spec;
}

const ArchitectureRegistration kDeepseekV2(
    {"deepseek_v2", "DeepSeek-V2: multi-head latent attention, dense then routed + shared experts", read_deepseek_v2,
     {"q_lora_rank (null: q_proj)", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
      "attention_bias", "mlp_bias", "first_k_dense_replace", "n_routed_experts", "num_experts_per_tok",
      "moe_intermediate_size", "n_shared_experts", "routed_scaling_factor",
      "topk_method greedy|group_limited_greedy (n_group, topk_group)",
      "rope default|linear|dynamic|yarn|llama3 (mscale_all_dim scales the softmax)"},
     {"DeepseekV2ForCausalLM"}});

}  // namespace
}  // namespace canrun
