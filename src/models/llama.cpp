// Llama (1, 2, 3.x) and the many checkpoints that reuse its layout (SmolLM, TinyLlama...).
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_llama(const ConfigReader& config) {
  DecoderSpec spec = read_llama_like_spec(config, LlamaLikeDefaults{});
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.mlp_bias = config.boolean("mlp_bias", false);
  return spec;
}

const ArchitectureRegistration kLlama({"llama", "Llama: RMSNorm, rotary (default/linear/llama3), GQA, SwiGLU",
                                       read_llama,
                                       {"attention_bias", "mlp_bias", "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"LlamaForCausalLM"}});

}  // namespace
}  // namespace canrun
