// Mixtral: the Mistral layout with routed experts (w1 gate, w3 up, w2 down); the top-k
// router weights are always renormalised.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_mixtral(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.intermediate_size = 14336;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 4096 * 32;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.sliding_window = uniform_windows(config, spec.num_layers, 0);
  MoeKeys keys;
  keys.num_experts = "num_local_experts";
  keys.num_experts_alias = "num_experts";
  keys.default_experts = 8;
  keys.default_top_k = 2;
  keys.expert_ffn = nullptr;
  keys.always_normalize = true;
  spec.moe = read_moe(config, spec, keys);
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  use_mixtral_expert_names(spec.names);
  return spec;
}

const ArchitectureRegistration kMixtral({"mixtral", "Mixtral: Mistral layout, routed experts (top-k renormalised)",
                                         read_mixtral,
                                         {"num_local_experts", "num_experts_per_tok", "sliding_window",
                                          "rope default|linear|dynamic|yarn|llama3"}, {"MixtralForCausalLM"}});

}  // namespace
}  // namespace canrun
