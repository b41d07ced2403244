// SmolLM3: the Llama layout where every no_rope_layer_interval-th layer has no rotary
// positions (no_rope_layers), optionally sliding on those layers.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_smollm3(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 128256;
  defaults.hidden_size = 2048;
  defaults.num_layers = 36;
  defaults.num_heads = 16;
  defaults.num_kv_heads = 4;
  defaults.max_positions = 32768;
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.mlp_bias = config.boolean("mlp_bias", false);
  const int64_t interval = config.integer("no_rope_layer_interval", 4, 1, 1 << 20);
  spec.rope_layers.resize(static_cast<size_t>(spec.num_layers));
  if (config.has("no_rope_layers")) {
    const Json& list = config.json()["no_rope_layers"];
    if (!list.is_array() || static_cast<int64_t>(list.size()) != spec.num_layers)
      config.reject("no_rope_layers", "must list 0 or 1 for each of the " + std::to_string(spec.num_layers) +
                                          " layers");
    for (int64_t i = 0; i < spec.num_layers; ++i) {
      const Json& item = list[static_cast<size_t>(i)];
      if (!item.is_number_integer() && !item.is_boolean())
        config.reject("no_rope_layers", "entry " + std::to_string(i) + " is " + ConfigReader::shown(item) + "; expected 0 or 1");
      spec.rope_layers[i] = item.is_boolean() ? item.get<bool>() : item.get<int64_t>() != 0;
    }
  } else {
    for (int64_t i = 0; i < spec.num_layers; ++i) spec.rope_layers[i] = (i + 1) % interval != 0;
  }
  const bool use_sliding = config.boolean("use_sliding_window", false);
  const int64_t window = config.has("sliding_window") ? config.integer("sliding_window", std::nullopt, 1, int64_t{1} << 30) : 0;
  std::vector<int64_t> windows(static_cast<size_t>(spec.num_layers), 0);
  if (config.has("layer_types")) {
    windows = read_layer_type_windows(config, spec.num_layers, window, [](int64_t) { return false; });
  } else if (use_sliding && window > 0) {
    for (int64_t i = 0; i < spec.num_layers; ++i) windows[i] = spec.rope_layers[i] ? 0 : window;
  }
  spec.sliding_window = windows;
  return spec;
}

const ArchitectureRegistration kSmolLM3({"smollm3", "SmolLM3: Llama layout, every 4th layer without rope (NoPE)",
                                         read_smollm3,
                                         {"no_rope_layers", "no_rope_layer_interval", "use_sliding_window",
                                          "layer_types", "attention_bias", "mlp_bias", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"}, {"SmolLM3ForCausalLM"}});

}  // namespace
}  // namespace canrun
