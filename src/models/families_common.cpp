#include "models/families_common.h"

#include <algorithm>

#include "models/llama_like.h"

namespace canrun {

int64_t sliding_window_or_null(const ConfigReader& config, int64_t fallback) {
  if (config.json().contains("sliding_window") && !config.has("sliding_window")) return 0;
  return config.has("sliding_window") ? config.integer("sliding_window", std::nullopt, 1, int64_t{1} << 30) : fallback;
}

std::vector<int64_t> uniform_windows(const ConfigReader& config, int64_t num_layers, int64_t fallback) {
  return std::vector<int64_t>(static_cast<size_t>(num_layers), sliding_window_or_null(config, fallback));
}

void apply_biased_qk_norm_attention(const ConfigReader& config, DecoderSpec& spec, QkNorm kind) {
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.qk_norm = true;
  spec.qk_norm_kind = kind;
}

void apply_qwen3_attention(const ConfigReader& config, DecoderSpec& spec) {
  apply_biased_qk_norm_attention(config, spec, QkNorm::kPerHead);
  spec.sliding_window = read_qwen_style_windows(config, spec.num_layers);
}

std::vector<bool> sparse_layers(const ConfigReader& config, int64_t num_layers, int64_t num_experts) {
  std::vector<int64_t> dense_only;
  if (config.has("mlp_only_layers")) {
    const Json& list = config.json()["mlp_only_layers"];
    if (!list.is_array()) config.reject("mlp_only_layers", "must be a list of layer indices");
    for (const Json& item : list) {
      if (!item.is_number_integer()) config.reject("mlp_only_layers", "must be a list of layer indices");
      dense_only.push_back(item.get<int64_t>());
    }
  }
  const int64_t step = config.integer("decoder_sparse_step", 1, 1, 1 << 20);
  std::vector<bool> sparse(static_cast<size_t>(num_layers));
  for (int64_t i = 0; i < num_layers; ++i)
    sparse[i] = std::find(dense_only.begin(), dense_only.end(), i) == dense_only.end() && num_experts > 0 &&
                (i + 1) % step == 0;
  return sparse;
}

void reject_option(const ConfigReader& config, const std::string& field, const std::string& value,
                   const std::string& model_type, const std::string& why) {
  fail(ErrorKind::kUnsupportedOption, config.path() + ": field '" + field + "': " + value +
                                          " is not supported for " + model_type + " (" + why + ")");
}

std::vector<std::string> read_layer_list(const ConfigReader& config, const std::string& key, int64_t num_layers,
                                         const std::vector<std::string>& allowed) {
  std::string names;
  for (const std::string& name : allowed) names += (names.empty() ? "\"" : " or \"") + name + "\"";
  const Json& list = config.json()[key];
  if (!list.is_array() || static_cast<int64_t>(list.size()) != num_layers)
    config.reject(key, "must list " + names + " for each of the " + std::to_string(num_layers) + " layers");
  std::vector<std::string> layers;
  for (const Json& entry : list) {
    if (!entry.is_string() || std::find(allowed.begin(), allowed.end(), entry.get<std::string>()) == allowed.end())
      config.reject(key, "entry " + std::to_string(layers.size()) + " must be " + names);
    layers.push_back(entry.get<std::string>());
  }
  return layers;
}

void read_layer_type_ropes(const ConfigReader& config, DecoderSpec& spec, const RopeDefaults& global,
                           const RopeDefaults& local, int64_t full_head_dim) {
  const int64_t full_dim = full_head_dim > 0 ? full_head_dim : spec.head_dim;
  const bool nested = config.has("rope_parameters") && config.json()["rope_parameters"].contains("full_attention");
  if (nested) {
    const ConfigReader params = config.object("rope_parameters");
    const ConfigReader full = params.object("full_attention");
    spec.rope = read_rope_parameters(config, &full, full_dim, global);
    if (params.has("sliding_attention")) {
      const ConfigReader sliding = params.object("sliding_attention");
      spec.local_rope = read_rope_parameters(config, &sliding, spec.head_dim, local);
    } else {
      spec.local_rope = read_rope_parameters(config, nullptr, spec.head_dim, local);
    }
  } else {
    spec.rope = read_rope_spec(config, full_dim, global);  // rope_scaling applies to full layers
    spec.local_rope = read_rope_parameters(config, nullptr, spec.head_dim, local);
  }
  spec.use_local_rope = true;
}

void read_mamba(const ConfigReader& config, DecoderSpec& spec, int64_t inner) {
  MambaSpec& m = spec.mamba;
  m.heads = config.integer("mamba_n_heads", 128, 1, 1 << 16);
  const bool auto_head_dim = !config.has("mamba_d_head") || (config.json()["mamba_d_head"].is_string() &&
                                                             config.json()["mamba_d_head"].get<std::string>() == "auto");
  m.head_dim = auto_head_dim ? inner / m.heads : config.integer("mamba_d_head", std::nullopt, 1, 1 << 16);
  if (m.heads * m.head_dim != inner)
    config.reject(auto_head_dim ? "mamba_n_heads" : "mamba_d_head",
                  "mamba_n_heads x mamba_d_head must equal the Mamba width (" + std::to_string(inner) + ")");
  m.state_size = config.integer("mamba_d_state", 256, 1, 1 << 16);
  m.groups = config.integer("mamba_n_groups", 1, 1, m.heads);
  if (m.heads % m.groups != 0)
    config.reject("mamba_n_groups", "must divide mamba_n_heads (" + std::to_string(m.heads) + ")");
  m.conv_kernel = config.integer("mamba_d_conv", 4, 1, 1024);
  m.conv_bias = config.boolean("mamba_conv_bias", true);
  m.proj_bias = config.boolean("mamba_proj_bias", false);
  m.norm_eps = spec.norm_eps;
  if (config.has("time_step_limit")) {
    // transformers writes an infinite upper limit as {"__float__": "Infinity"}.
    const Json& limit = config.json()["time_step_limit"];
    const auto infinite = [](const Json& v) {
      return v.is_null() || (v.is_object() && v.contains("__float__") && v["__float__"] == "Infinity");
    };
    if (!limit.is_array() || limit.size() != 2 || !limit[0].is_number() || limit[0].get<double>() < 0 ||
        !(limit[1].is_number() || infinite(limit[1])) ||
        (limit[1].is_number() && limit[1].get<double>() < limit[0].get<double>()))
      config.reject("time_step_limit", "must be [lower, upper] with 0 <= lower <= upper (upper infinite: none)");
    m.dt_min = limit[0].get<float>();
    if (limit[1].is_number()) m.dt_max = limit[1].get<float>();
  }
  if (spec.activation != Activation::kSilu)
    reject_option(config, "hidden_act", config.string("hidden_act", std::nullopt), spec.model_type,
                  "its Mamba-2 layers run silu only");
}

}  // namespace canrun
