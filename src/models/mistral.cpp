// Mistral: the Llama layout with sliding-window attention on every layer.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_mistral(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.intermediate_size = 14336;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 4096 * 32;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  // transformers' default is 4096; an explicit null turns the window off.
  const bool window_explicitly_null = config.json().contains("sliding_window") && !config.has("sliding_window");
  const int64_t window = window_explicitly_null ? 0 : config.integer("sliding_window", 4096, 1, int64_t{1} << 30);
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), window);
  return spec;
}

const ArchitectureRegistration kMistral({"mistral", "Mistral: Llama layout with sliding-window attention",
                                         read_mistral,
                                       {"sliding_window", "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"MistralForCausalLM", "MistralModel"}});

}  // namespace
}  // namespace canrun
