#include "models/llama_like.h"

#include <functional>

namespace canrun {
namespace {

constexpr int64_t kMaxVocab = int64_t{1} << 22;

}  // namespace

NormSpec rms_norm(float eps, bool unit_offset) {
  NormSpec norm;
  norm.kind = NormKind::kRms;
  norm.eps = eps;
  norm.unit_offset = unit_offset;
  return norm;
}

NormSpec layer_norm(float eps, bool bias) {
  NormSpec norm;
  norm.kind = NormKind::kLayerNorm;
  norm.eps = eps;
  norm.bias = bias;
  return norm;
}

Activation read_activation(const ConfigReader& config, const std::string& key, const std::string& fallback,
                           const std::string& model_type) {
  const std::string name = config.string(key, fallback);
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast" || name == "gelu_tanh")
    return Activation::kGeluTanh;
  if (name == "gelu") return Activation::kGelu;
  if (name == "relu") return Activation::kRelu;
  if (name == "relu2") return Activation::kRelu2;
  if (name == "quick_gelu") return Activation::kQuickGelu;
  fail(ErrorKind::kUnsupportedOption,
       config.path() + ": field '" + key + "': '" + name + "' is not supported for " + model_type +
           " (supported: silu, swish, gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, relu2, quick_gelu)");
}

namespace {

void read_fp8(const ConfigReader& quant, DecoderSpec& spec, const std::function<void(const std::string&)>& refuse) {
  if (quant.string("fmt", std::string("e4m3")) != "e4m3") refuse("fmt '" + quant.string("fmt", std::nullopt) + "'");
  if (quant.string("activation_scheme", std::string("dynamic")) != "dynamic")
    refuse("activation_scheme '" + quant.string("activation_scheme", std::nullopt) + "'");
  std::vector<int64_t> block = {128, 128};  // transformers' FineGrainedFP8Config default
  if (quant.has("weight_block_size")) {
    const Json& sizes = quant.json()["weight_block_size"];
    if (!sizes.is_array() || sizes.size() != 2)
      quant.reject("weight_block_size", "must be [rows, columns] of a weight block");
    for (size_t i = 0; i < 2; ++i) {
      if (!sizes[i].is_number_integer() || sizes[i].get<int64_t>() < 1 || sizes[i].get<int64_t>() > (1 << 20))
        quant.reject("weight_block_size", "must be two positive integers");
      block[i] = sizes[i].get<int64_t>();
    }
  }
  spec.fp8 = {block[0], block[1]};
}

// compressed-tensors, as llm-compressor saves W4A16 / W8A16 checkpoints: one config group of
// symmetric int weights, packed (pack-quantized), with a scale per group of inputs or per row.
void read_compressed_tensors(const ConfigReader& quant, DecoderSpec& spec,
                             const std::function<void(const std::string&)>& refuse) {
  const auto absent_or_empty = [&](const std::string& key) {
    return !quant.has(key) || (quant.json()[key].is_object() && quant.json()[key].empty());
  };
  for (const char* key : {"sparsity_config", "transform_config", "kv_cache_scheme"})
    if (!absent_or_empty(key)) refuse(std::string(key));
  if (!quant.has("config_groups") || !quant.json()["config_groups"].is_object() ||
      quant.json()["config_groups"].size() != 1)
    quant.reject("config_groups", "must hold one group (canrun reads one quantization scheme per checkpoint)");
  const std::string group_name = quant.json()["config_groups"].begin().key();
  const ConfigReader group = quant.object("config_groups").object(group_name);
  const std::string format = group.string("format", quant.string("format", std::string("dense")));
  if (format != "pack-quantized") refuse("format '" + format + "'");
  for (const char* key : {"input_activations", "output_activations"})
    if (group.has(key)) refuse(std::string("config_groups.") + group_name + "." + key + " (activation quantization)");
  const ConfigReader weights = group.object("weights");
  const auto refuse_weights = [&](const std::string& field, const std::string& value) {
    refuse("config_groups." + group_name + ".weights." + field + " " + value);
  };
  if (weights.string("type", std::nullopt) != "int") refuse_weights("type", "'" + weights.string("type", std::nullopt) + "'");
  if (!weights.boolean("symmetric", true)) refuse_weights("symmetric", "false (zero points)");
  if (weights.boolean("dynamic", false)) refuse_weights("dynamic", "true");
  if (weights.has("actorder") && weights.json()["actorder"] != Json("weight") && weights.json()["actorder"] != Json(false))
    refuse_weights("actorder", ConfigReader::shown(weights.json()["actorder"]) + " (a g_idx permutation)");
  PackedIntScheme scheme;
  scheme.bits = static_cast<int>(weights.integer("num_bits", std::nullopt, 1, 64));
  if (scheme.bits != 4 && scheme.bits != 8) refuse_weights("num_bits", std::to_string(scheme.bits));
  const std::string strategy = weights.string("strategy", std::nullopt);
  if (strategy == "group")
    scheme.group_size = weights.integer("group_size", std::nullopt, 1, int64_t{1} << 20);
  else if (strategy != "channel")
    refuse_weights("strategy", "'" + strategy + "'");
  spec.packed_int = scheme;
}

// GPTQ as AutoGPTQ and GPTQModel publish it: symmetric int4 or int8 weights, inputs in order (no
// desc_act), a scale per group of inputs or per output; the v1 (`gptq`) or v2 (`gptq_v2`) layout.
void read_gptq(const ConfigReader& quant, DecoderSpec& spec, const std::function<void(const std::string&)>& refuse) {
  PackedIntScheme scheme;
  scheme.packing = IntPacking::kGptq;
  scheme.bits = static_cast<int>(quant.integer("bits", std::nullopt, 1, 64));
  if (scheme.bits != 4 && scheme.bits != 8) refuse("bits " + std::to_string(scheme.bits));
  const int64_t group_size = quant.integer("group_size", int64_t{128}, -1, int64_t{1} << 20);
  if (group_size == 0) quant.reject("group_size", "must be -1 (one scale per output) or positive");
  scheme.group_size = group_size < 0 ? 0 : group_size;
  if (quant.boolean("desc_act", false)) refuse("desc_act true (inputs permuted by g_idx)");
  if (!quant.boolean("sym", true)) refuse("sym false (zero points)");
  if (quant.boolean("lm_head", false)) refuse("lm_head true (a quantized output head)");
  if (quant.has("dynamic") && !(quant.json()["dynamic"].is_object() && quant.json()["dynamic"].empty()) &&
      !quant.json()["dynamic"].is_null())
    refuse("dynamic (per-module overrides)");
  if (quant.string("pack_dtype", std::string("int32")) != "int32")
    refuse("pack_dtype '" + quant.string("pack_dtype", std::nullopt) + "'");
  const std::string layout_key = quant.has("checkpoint_format") ? "checkpoint_format" : "format";
  const std::string layout = quant.string(layout_key, std::string("gptq"));
  if (layout != "gptq" && layout != "gptq_v2") refuse(layout_key + " '" + layout + "'");
  scheme.stored_zero = (1 << (scheme.bits - 1)) - (layout == "gptq" ? 1 : 0);
  spec.packed_int = scheme;
}

}  // namespace

void read_quantization(const ConfigReader& config, DecoderSpec& spec) {
  if (!config.has("quantization_config")) return;
  const ConfigReader quant = config.object("quantization_config");
  const std::string method = quant.string("quant_method", std::string("unknown"));
  const auto refuse = [&](const std::string& what) {
    fail(ErrorKind::kUnsupportedOption,
         config.path() + ": field 'quantization_config': " + what + " is not supported for " + spec.model_type +
             " (supported: none; quant_method fp8 with e4m3 weights, weight_block_size and dynamic activations; "
             "quant_method compressed-tensors, format pack-quantized, symmetric int4 or int8 weights in "
             "groups or per channel; quant_method gptq, symmetric int4 or int8 without desc_act)");
  };
  if (method == "fp8")
    read_fp8(quant, spec, refuse);
  else if (method == "compressed-tensors")
    read_compressed_tensors(quant, spec, refuse);
  else if (method == "gptq")
    read_gptq(quant, spec, refuse);
  else
    refuse("quant_method '" + method + "'");
}

DecoderSpec read_llama_like_spec(const ConfigReader& config, const LlamaLikeDefaults& defaults) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  read_quantization(config, spec);
  spec.vocab_size = config.integer("vocab_size", defaults.vocab_size, 1, kMaxVocab);
  spec.hidden_size = config.integer("hidden_size", defaults.hidden_size, 1, kMaxConfigWidth);
  spec.intermediate_size = config.integer("intermediate_size", defaults.intermediate_size, 1, 8 * kMaxConfigWidth);
  spec.num_layers = config.integer("num_hidden_layers", defaults.num_layers, 1, 1024);
  spec.num_heads = config.integer("num_attention_heads", defaults.num_heads, 1, 4096);
  spec.num_kv_heads = config.integer("num_key_value_heads", defaults.num_kv_heads.value_or(spec.num_heads), 1,
                                     spec.num_heads);
  if (spec.num_heads % spec.num_kv_heads != 0)
    config.reject("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(spec.num_heads) + ")");
  const bool explicit_head_dim = defaults.head_dim_from_config && config.has("head_dim");
  if (!explicit_head_dim && !defaults.head_dim && spec.hidden_size % spec.num_heads != 0)
    config.reject("hidden_size", "must be divisible by num_attention_heads when head_dim is absent");
  const int64_t derived_head_dim = defaults.head_dim.value_or(spec.hidden_size / spec.num_heads);
  spec.head_dim = defaults.head_dim_from_config ? config.integer("head_dim", derived_head_dim, 2, 8192)
                                                : derived_head_dim;
  spec.max_positions = config.integer("max_position_embeddings", defaults.max_positions, 1, int64_t{1} << 30);
  spec.norm_eps = static_cast<float>(config.number(defaults.norm_eps_key, defaults.norm_eps));
  if (spec.norm_eps <= 0) config.reject(defaults.norm_eps_key, "must be positive");
  spec.norm = rms_norm(spec.norm_eps);
  spec.qk_norm_spec = spec.norm;
  spec.tie_embeddings = config.boolean("tie_word_embeddings", defaults.tie_embeddings);
  spec.activation = read_activation(config, defaults.activation_key, defaults.activation, spec.model_type);
  RopeDefaults rope;
  rope.theta = defaults.rope_theta;
  rope.partial_rotary_factor = defaults.partial_rotary_factor;
  rope.max_positions = spec.max_positions;
  spec.rope = read_rope_spec(config, spec.head_dim, rope);
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  return spec;
}

std::vector<int64_t> read_layer_type_windows(const ConfigReader& config, int64_t num_layers, int64_t window,
                                             const std::function<bool(int64_t)>& default_sliding) {
  std::vector<int64_t> windows(static_cast<size_t>(num_layers), 0);
  if (!config.has("layer_types")) {
    for (int64_t i = 0; i < num_layers; ++i) windows[i] = default_sliding(i) ? window : 0;
    return windows;
  }
  const Json& types = config.json()["layer_types"];
  if (!types.is_array() || static_cast<int64_t>(types.size()) != num_layers)
    config.reject("layer_types", "must list one type per layer (" + std::to_string(num_layers) + ")");
  for (int64_t i = 0; i < num_layers; ++i) {
    const Json& type = types[static_cast<size_t>(i)];
    if (type == "sliding_attention") {
      windows[i] = window;
    } else if (type != "full_attention") {
      config.reject("layer_types", "entry " + std::to_string(i) + " is " + ConfigReader::shown(type) +
                                       "; expected \"full_attention\" or \"sliding_attention\"");
    }
  }
  return windows;
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
        config.reject("layer_types", "entry " + std::to_string(i) + " is " + ConfigReader::shown(type) +
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
