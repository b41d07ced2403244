// ERNIE 4.5 (dense): the Llama layout rotated in interleaved pairs, with biases on every
// projection when use_bias, tied embeddings by default.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_ernie4_5(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 103424;
  defaults.hidden_size = 1024;
  defaults.intermediate_size = 3072;
  defaults.num_layers = 18;
  defaults.num_heads = 16;
  defaults.num_kv_heads = 2;
  defaults.head_dim = 128;
  defaults.max_positions = 131072;
  defaults.norm_eps = 1e-5;
  defaults.rope_theta = 500000.0;
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.rope_interleaved = true;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = config.boolean("use_bias", false);
  return spec;
}

const ArchitectureRegistration kErnie4_5({"ernie4_5", "ERNIE 4.5: Llama layout, rotary in interleaved pairs, use_bias",
                                          read_ernie4_5,
                                          {"use_bias", "tie_word_embeddings",
                                           "rope default|linear|dynamic|yarn|llama3"},
                                          {"Ernie4_5ForCausalLM"}});

}  // namespace
}  // namespace canrun
