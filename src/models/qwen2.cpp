// Qwen2 / Qwen2.5: the Llama layout with biases on q, k and v.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_qwen2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151936;
  defaults.intermediate_size = 22016;
  defaults.max_positions = 32768;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = true;
  spec.sliding_window = read_qwen_style_windows(config, spec.num_layers);
  return spec;
}

const ArchitectureRegistration kQwen2({"qwen2", "Qwen2/2.5: Llama layout with q/k/v biases, optional sliding window",
                                       read_qwen2,
                                       {"use_sliding_window", "max_window_layers", "layer_types", "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"Qwen2ForCausalLM"}});

}  // namespace
}  // namespace canrun
