// GLM-4.5 / 4.6 / 4.7 (glm4_moe): GQA attention with q/k/v biases (attention_bias, none on the
// output), rope on half of each head by default, optional per-head q/k RMSNorms (use_qk_norm);
// dense MLPs on the first first_k_dense_replace layers, then deepseek_v3's routed experts
// (noaux_tc: sigmoid scores plus a choice bias among the best groups) with shared experts.
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_glm4_moe(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151552;
  defaults.intermediate_size = 10944;
  defaults.num_layers = 46;
  defaults.num_heads = 96;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 131072;
  defaults.norm_eps = 1e-5;
  defaults.partial_rotary_factor = 0.5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = config.boolean("attention_bias", false);
  if (config.boolean("use_qk_norm", false)) {
    spec.qk_norm = true;
    spec.qk_norm_kind = QkNorm::kPerHead;
  }
  spec.moe_layers = sparse_from(config, spec.num_layers, 1);
  read_noaux_tc_experts(config, spec, {128, 8, 1408, 1, 1, 1.0});
  spec.names.shared_expert = "mlp.shared_experts";
  return spec;
}

const ArchitectureRegistration kGlm4Moe(
    {"glm4_moe", "GLM-4.5/4.6/4.7: GQA with partial rotary and optional q/k norms, sigmoid-routed experts",
     read_glm4_moe,
     {"attention_bias", "use_qk_norm", "partial_rotary_factor", "head_dim", "first_k_dense_replace",
      "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "n_group",
      "topk_group", "norm_topk_prob", "routed_scaling_factor", "tie_word_embeddings",
      "rope default|linear|dynamic|yarn|llama3"},
     {"Glm4MoeForCausalLM"}});

}  // namespace
}  // namespace canrun
