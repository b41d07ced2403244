// Apertus (Swiss AI): the Llama layout with per-head q/k RMSNorms, norms named
// attention_layernorm and feedforward_layernorm, and an ungated MLP, down(act(up(x))), whose
// activation is xIELU with learned scalars per layer (hidden_act "xielu", the default).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_apertus(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 131072;
  defaults.intermediate_size = 14336;
  defaults.max_positions = 65536;
  defaults.norm_eps = 1e-5;
  // xIELU is not an activation the shared reader knows (it has parameters): read the rest
  // without it, then set it.
  const bool xielu = config.string("hidden_act", std::string("xielu")) == "xielu";
  Json others = config.json();
  if (xielu) others.erase("hidden_act");
  DecoderSpec spec = read_llama_like_spec(ConfigReader(others, config.path()), defaults);
  if (xielu) spec.activation = Activation::kXielu;
  spec.gated_mlp = false;
  spec.names.attn_norm = "attention_layernorm";
  spec.names.mlp_norm = "feedforward_layernorm";
  apply_biased_qk_norm_attention(config, spec, QkNorm::kPerHead);
  return spec;
}

const ArchitectureRegistration kApertus({"apertus",
                                         "Apertus: Llama layout, per-head q/k RMSNorm, ungated xIELU MLP",
                                         read_apertus,
                                         {"hidden_act xielu (learned scalars per layer) or any other",
                                          "attention_bias", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"},
                                         {"ApertusForCausalLM"}});

}  // namespace
}  // namespace canrun
