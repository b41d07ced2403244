// OLMoE: q/k RMSNorm over all heads at once, routed experts on every layer.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_olmoe(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 50304;
  defaults.hidden_size = 2048;
  defaults.intermediate_size = 2048;
  defaults.num_layers = 16;
  defaults.num_heads = 16;
  defaults.max_positions = 4096;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  if (config.has("clip_qkv"))
    reject_option(config, "clip_qkv", ConfigReader::shown(config.json()["clip_qkv"]), "olmoe", "supported: null");
  apply_biased_qk_norm_attention(config, spec, QkNorm::kWhole);
  MoeKeys keys;
  keys.num_experts_alias = "num_local_experts";
  keys.default_experts = 64;
  keys.default_top_k = 8;
  keys.expert_ffn = nullptr;
  spec.moe = read_moe(config, spec, keys);
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  return spec;
}

const ArchitectureRegistration kOlmoe({"olmoe", "OLMoE: q/k RMSNorm over all heads, routed experts", read_olmoe,
                                       {"num_experts", "num_experts_per_tok", "norm_topk_prob", "attention_bias",
                                        "rope default|linear|dynamic|yarn|llama3"}, {"OlmoeForCausalLM"}});

}  // namespace
}  // namespace canrun
