#include "models/llama_like.h"

namespace canrun {
namespace {

constexpr int64_t kMaxWidth = int64_t{1} << 17;
constexpr int64_t kMaxVocab = int64_t{1} << 22;

}  // namespace

DecoderSpec read_llama_like_spec(const ConfigReader& config, const LlamaLikeDefaults& defaults) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  spec.vocab_size = config.integer("vocab_size", defaults.vocab_size, 1, kMaxVocab);
  spec.hidden_size = config.integer("hidden_size", defaults.hidden_size, 1, kMaxWidth);
  spec.intermediate_size = config.integer("intermediate_size", defaults.intermediate_size, 1, 8 * kMaxWidth);
  spec.num_layers = config.integer("num_hidden_layers", defaults.num_layers, 1, 1024);
  spec.num_heads = config.integer("num_attention_heads", defaults.num_heads, 1, 4096);
  spec.num_kv_heads = config.integer("num_key_value_heads", defaults.num_kv_heads.value_or(spec.num_heads), 1,
                                     spec.num_heads);
  if (spec.num_heads % spec.num_kv_heads != 0)
    config.reject("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(spec.num_heads) + ")");
  if (!config.has("head_dim") && !defaults.head_dim && spec.hidden_size % spec.num_heads != 0)
    config.reject("hidden_size", "must be divisible by num_attention_heads when head_dim is absent");
  spec.head_dim = config.integer("head_dim", defaults.head_dim.value_or(spec.hidden_size / spec.num_heads), 2,
                                 8192);
  spec.max_positions = config.integer("max_position_embeddings", defaults.max_positions, 1, int64_t{1} << 30);
  spec.norm_eps = static_cast<float>(config.number("rms_norm_eps", defaults.norm_eps));
  if (spec.norm_eps <= 0) config.reject("rms_norm_eps", "must be positive");
  spec.tie_embeddings = config.boolean("tie_word_embeddings", false);
  const std::string activation = config.string("hidden_act", std::string("silu"));
  if (activation != "silu")
    fail(ErrorKind::kUnsupportedOption,
         config.path() + ": field 'hidden_act': '" + activation + "' is not supported for " + spec.model_type +
             " (supported: silu)");
  spec.rope = read_rope_spec(config, spec.head_dim, defaults.rope_theta);
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  return spec;
}

std::vector<int64_t> read_qwen_style_windows(const ConfigReader& config, int64_t num_layers) {
  std::vector<int64_t> windows(static_cast<size_t>(num_layers), 0);
  const bool use_sliding = config.boolean("use_sliding_window", false);
  const int64_t window = use_sliding ? config.integer("sliding_window", 4096, 1, int64_t{1} << 30) : 0;
  if (config.has("layer_types")) {
    const Json& types = config.json()["layer_types"];
    if (!types.is_array() || static_cast<int64_t>(types.size()) != num_layers)
      config.reject("layer_types", "must list one type per layer (" + std::to_string(num_layers) + ")");
    for (int64_t i = 0; i < num_layers; ++i) {
      const Json& type = types[static_cast<size_t>(i)];
      if (type == "sliding_attention") {
        windows[i] = config.integer("sliding_window", std::nullopt, 1, int64_t{1} << 30);
      } else if (type != "full_attention") {
        config.reject("layer_types", "entry " + std::to_string(i) + " is " + type.dump() +
                                         "; expected \"full_attention\" or \"sliding_attention\"");
      }
    }
    return windows;
  }
  const int64_t first_sliding = config.integer("max_window_layers", 28, 0, 1 << 20);
  for (int64_t i = first_sliding; i < num_layers && window > 0; ++i) windows[i] = window;
  return windows;
}

}  // namespace canrun
