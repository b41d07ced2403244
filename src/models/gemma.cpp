// Gemma (1): the Llama layout with (1 + w) RMSNorms, embeddings scaled by sqrt(hidden_size),
// gelu (tanh) gated MLP and tied embeddings.
#include "models/gemma_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gemma(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 256000;
  defaults.hidden_size = 3072;
  defaults.intermediate_size = 24576;
  defaults.num_layers = 28;
  defaults.num_heads = 16;
  defaults.num_kv_heads = 16;
  defaults.head_dim = 256;
  defaults.max_positions = 8192;
  defaults.activation = "gelu_pytorch_tanh";
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_gemma_basics(config, spec);
  return spec;
}

const ArchitectureRegistration kGemma({"gemma", "Gemma: (1+w) RMSNorm, sqrt(hidden) embedding scale, GeGLU", read_gemma,
                                       {"hidden_act", "attention_bias", "tie_word_embeddings",
                                        "rope default|linear|dynamic|yarn|llama3"}, {"GemmaForCausalLM"}});

}  // namespace
}  // namespace canrun
