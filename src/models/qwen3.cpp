// Qwen3: the Llama layout with an RMSNorm over each head of q and k.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_qwen3(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151936;
  defaults.intermediate_size = 22016;
  defaults.head_dim = 128;
  defaults.max_positions = 32768;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_qwen3_attention(config, spec);
  return spec;
}

const ArchitectureRegistration kQwen3({"qwen3", "Qwen3: Llama layout with per-head q/k RMSNorm", read_qwen3,
                                       {"attention_bias", "use_sliding_window", "layer_types", "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"Qwen3ForCausalLM", "Qwen3Model"}});

}  // namespace
}  // namespace canrun
