// Seed-OSS (ByteDance): the Llama layout with biases on q, k and v (attention_bias, on by
// default) apart from the output projection's (attention_out_bias) and the MLP's (mlp_bias).
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_seed_oss(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 155136;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 27648;
  defaults.num_layers = 64;
  defaults.num_heads = 80;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 128;
  defaults.max_positions = 524288;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = config.boolean("attention_bias", true);
  spec.o_bias = config.boolean("attention_out_bias", false);
  spec.mlp_bias = config.boolean("mlp_bias", false);
  return spec;
}

const ArchitectureRegistration kSeedOss({"seed_oss", "Seed-OSS: Llama layout, q/k/v biases apart from the output's",
                                         read_seed_oss,
                                         {"attention_bias", "attention_out_bias", "mlp_bias", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"},
                                         {"SeedOssForCausalLM"}});

}  // namespace
}  // namespace canrun
