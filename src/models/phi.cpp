// Phi (1, 1.5, 2): one LayerNorm per layer feeding attention and MLP in parallel, partial
// rotary, biases everywhere, gelu_new MLP fc1/fc2, lm_head with a bias.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_phi(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 51200;
  defaults.hidden_size = 2048;
  defaults.intermediate_size = 8192;
  defaults.num_layers = 24;
  defaults.num_heads = 32;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "layer_norm_eps";
  defaults.activation = "gelu_new";
  defaults.partial_rotary_factor = 0.5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  if (config.boolean("qk_layernorm", false))
    reject_option(config, "qk_layernorm", "true", "phi", "supported: false");
  spec.norm = layer_norm(spec.norm_eps);
  spec.gated_mlp = false;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = true;
  spec.lm_head_bias = true;
  spec.residual = Residual::kParallel;
  WeightNames& n = spec.names;
  n.final_norm = "model.final_layernorm";
  n.mlp_norm = "";
  n.o = "self_attn.dense";
  n.up = "mlp.fc1";
  n.down = "mlp.fc2";
  return spec;
}

const ArchitectureRegistration kPhi({"phi", "Phi-1/1.5/2: parallel attention and MLP on one LayerNorm, partial rotary",
                                     read_phi,
                                     {"partial_rotary_factor", "hidden_act", "tie_word_embeddings",
                                      "rope default|linear|dynamic|yarn|llama3"}, {"PhiForCausalLM"}});

}  // namespace
}  // namespace canrun
