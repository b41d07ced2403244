// Qwen2-MoE / Qwen1.5-MoE: Qwen2 attention (q/k/v biases) with routed experts plus a shared
// expert scaled by sigmoid(shared_expert_gate(x)).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_qwen2_moe(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151936;
  defaults.hidden_size = 2048;
  defaults.intermediate_size = 5632;
  defaults.num_layers = 24;
  defaults.num_heads = 16;
  defaults.num_kv_heads = 16;
  defaults.max_positions = 32768;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = config.boolean("qkv_bias", true);
  spec.sliding_window = read_qwen_style_windows(config, spec.num_layers);
  MoeKeys keys;
  keys.default_experts = 60;
  keys.default_top_k = 4;
  keys.default_expert_ffn = 1408;
  spec.moe = read_moe(config, spec, keys);
  spec.moe.shared_ffn = config.integer("shared_expert_intermediate_size", 5632, 1, int64_t{1} << 20);
  spec.moe.shared_expert_gate = true;
  spec.moe_layers = sparse_layers(config, spec.num_layers, spec.moe.num_experts);
  return spec;
}

const ArchitectureRegistration kQwen2Moe({"qwen2_moe", "Qwen2-MoE: q/k/v biases, routed experts + gated shared expert",
                                          read_qwen2_moe,
                                          {"num_experts", "num_experts_per_tok", "norm_topk_prob",
                                           "shared_expert_intermediate_size", "decoder_sparse_step",
                                           "mlp_only_layers", "qkv_bias", "sliding window by layer",
                                           "rope default|linear|dynamic|yarn|llama3"}, {"Qwen2MoeForCausalLM"}});

}  // namespace
}  // namespace canrun
