// StarCoder2: LayerNorms with biases, biased attention, plain gelu (tanh) MLP c_fc/c_proj,
// sliding window on every layer, tied embeddings.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_starcoder2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 49152;
  defaults.hidden_size = 3072;
  defaults.intermediate_size = 12288;
  defaults.num_layers = 30;
  defaults.num_heads = 24;
  defaults.num_kv_heads = 2;
  defaults.max_positions = 4096;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "norm_epsilon";
  defaults.activation = "gelu_pytorch_tanh";
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.norm = layer_norm(spec.norm_eps);
  spec.gated_mlp = false;
  const bool bias = config.boolean("use_bias", true);
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = bias;
  spec.sliding_window = uniform_windows(config, spec.num_layers, 0);
  spec.names.up = "mlp.c_fc";
  spec.names.down = "mlp.c_proj";
  return spec;
}

const ArchitectureRegistration kStarcoder2({"starcoder2", "StarCoder2: LayerNorm, biased attention and gelu MLP, sliding window",
                                            read_starcoder2,
                                            {"use_bias", "sliding_window", "hidden_act", "tie_word_embeddings",
                                             "rope default|linear|dynamic|yarn|llama3"}, {"Starcoder2ForCausalLM"}});

}  // namespace
}  // namespace canrun
