// Qwen3-MoE: Qwen3 attention (per-head q/k RMSNorm) with routed experts: softmax over the
// router, top-k, renormalised when norm_topk_prob; dense MLP on mlp_only_layers.
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/families_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_qwen3_moe(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151936;
  defaults.hidden_size = 2048;
  defaults.intermediate_size = 6144;
  defaults.num_layers = 24;
  defaults.num_kv_heads = 4;
  defaults.max_positions = 32768;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_qwen3_attention(config, spec);
  MoeKeys keys;
  keys.num_experts_alias = "num_local_experts";
  keys.default_experts = 128;
  keys.default_top_k = 8;
  keys.default_expert_ffn = 768;
  spec.moe = read_moe(config, spec, keys);
  spec.moe_layers = sparse_layers(config, spec.num_layers, spec.moe.num_experts);
  return spec;
}

const ArchitectureRegistration kQwen3Moe({"qwen3_moe", "Qwen3-MoE: Qwen3 attention, routed experts (softmax, top-k)",
                                          read_qwen3_moe,
                                          {"num_experts", "num_experts_per_tok", "norm_topk_prob",
                                           "decoder_sparse_step", "mlp_only_layers", "sliding window by layer",
                                           "rope default|linear|dynamic|yarn|llama3", "tie_word_embeddings"}, {"Qwen3MoeForCausalLM"}});

}  // namespace
}  // namespace canrun
