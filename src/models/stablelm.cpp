// StableLM (2, Zephyr): LayerNorms with biases, partial rotary (25% by default), optional
// q/k/v biases, parallel residual on one norm and (StableLM 2 12B) a LayerNorm per head of q and k.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_stablelm(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 50304;
  defaults.hidden_size = 2560;
  defaults.intermediate_size = 6912;
  defaults.max_positions = 4096;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "layer_norm_eps";
  defaults.partial_rotary_factor = 0.25;
  defaults.head_dim_from_config = false;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.norm = layer_norm(spec.norm_eps);
  if (config.boolean("qk_layernorm", false)) {  // StableLM 2 12B: a bias-free LayerNorm per head
    spec.qk_norm = true;
    spec.qk_norm_kind = QkNorm::kPerHead;
    spec.qk_norm_weights = QkNormWeights::kHeadList;
    spec.qk_norm_spec = layer_norm(spec.norm_eps, /*bias=*/false);
    spec.names.q_norm = "self_attn.q_layernorm";
    spec.names.k_norm = "self_attn.k_layernorm";
  }
  spec.qkv_bias = config.boolean("use_qkv_bias", false);
  if (config.boolean("use_parallel_residual", false)) {
    spec.residual = Residual::kParallel;
    spec.names.mlp_norm = "";
  }
  return spec;
}

const ArchitectureRegistration kStablelm({"stablelm", "StableLM: LayerNorm, partial rotary, optional parallel residual",
                                          read_stablelm,
                                          {"partial_rotary_factor", "use_qkv_bias", "use_parallel_residual", "qk_layernorm",
                                           "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"StableLmForCausalLM"}});

}  // namespace
}  // namespace canrun
