#include "models/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace canrun {
namespace {

const char* const kSupportedRopeTypes = "default, linear, dynamic, yarn, longrope, llama3, proportional";

std::vector<double> factor_list(const ConfigReader& scaling, const std::string& key, int64_t expected) {
  const Json& value = scaling.json().contains(key) ? scaling.json()[key] : Json();
  if (!value.is_array()) scaling.reject(key, "must be a list of numbers");
  std::vector<double> factors;
  for (const Json& item : value) {
    if (!item.is_number()) scaling.reject(key, "must be a list of numbers, got " + ConfigReader::shown(item));
    factors.push_back(item.get<double>());
  }
  if (static_cast<int64_t>(factors.size()) != expected)
    scaling.reject(key, "has " + std::to_string(factors.size()) + " entries; expected rotary dimension / 2 = " +
                            std::to_string(expected));
  return factors;
}

void read_scaling(const ConfigReader& config, const ConfigReader& scaling, const RopeDefaults& defaults,
                  RopeSpec& spec) {
  const std::string type_key = scaling.has("rope_type") ? "rope_type" : "type";
  spec.type = scaling.string(type_key, std::string("default"));
  if (spec.type == "su" || (defaults.yarn_is_longrope && spec.type == "yarn")) spec.type = "longrope";
  if (spec.type == "default") return;
  const auto original_max = [&]() -> int64_t {
    // transformers gives a top-level original_max_position_embeddings priority (phi3 keeps it there).
    if (config.has("original_max_position_embeddings"))
      return config.integer("original_max_position_embeddings", std::nullopt, 1, int64_t{1} << 40);
    if (defaults.top_level_original_max && defaults.default_original_max > 0) return defaults.default_original_max;
    return scaling.integer("original_max_position_embeddings", spec.max_positions, 1, int64_t{1} << 40);
  };
  if (spec.type == "linear" || spec.type == "dynamic") {
    spec.factor = scaling.number("factor", std::nullopt);
  } else if (spec.type == "proportional") {
    spec.factor = scaling.number("factor", 1.0);
  } else if (spec.type == "llama3") {
    spec.factor = scaling.number("factor", std::nullopt);
    spec.low_freq_factor = scaling.number("low_freq_factor", std::nullopt);
    spec.high_freq_factor = scaling.number("high_freq_factor", std::nullopt);
    spec.original_max_positions = original_max();
    // Equal factors are published (Llama 4 Scout): the smoothed band is then empty.
    if (spec.high_freq_factor < spec.low_freq_factor)
      scaling.reject("high_freq_factor", "must not be less than low_freq_factor");
  } else if (spec.type == "yarn") {
    spec.original_max_positions = original_max();
    // transformers requires the key (a KeyError without it); only an explicit null means the
    // ratio of the context lengths.
    if (!scaling.json().contains("factor")) scaling.reject("factor", "is required by rope_type yarn (it may be null)");
    spec.factor = scaling.number("factor", static_cast<double>(spec.max_positions) /
                                               static_cast<double>(spec.original_max_positions));
    const auto get_mscale = [](double scale, double mscale) {
      return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
    };
    if (scaling.has("attention_factor")) {
      spec.attention_factor = scaling.number("attention_factor", std::nullopt);
    } else {
      const double mscale = scaling.number("mscale", 0.0);
      const double mscale_all_dim = scaling.number("mscale_all_dim", 0.0);
      spec.attention_factor = (mscale != 0 && mscale_all_dim != 0)
                                  ? get_mscale(spec.factor, mscale) / get_mscale(spec.factor, mscale_all_dim)
                                  : get_mscale(spec.factor, 1.0);
    }
    // transformers: `get("beta_fast") or 32`, so 0 also means the default.
    spec.beta_fast = scaling.number("beta_fast", 32.0);
    if (spec.beta_fast == 0) spec.beta_fast = 32.0;
    spec.beta_slow = scaling.number("beta_slow", 1.0);
    if (spec.beta_slow == 0) spec.beta_slow = 1.0;
    spec.truncate = scaling.boolean("truncate", true);
  } else if (spec.type == "longrope") {
    spec.original_max_positions = original_max();
    spec.short_factor = factor_list(scaling, "short_factor", spec.rotary_dim / 2);
    spec.long_factor = factor_list(scaling, "long_factor", spec.rotary_dim / 2);
    spec.factor = scaling.number("factor", static_cast<double>(spec.max_positions) /
                                               static_cast<double>(spec.original_max_positions));
    if (scaling.has("attention_factor")) {
      spec.attention_factor = scaling.number("attention_factor", std::nullopt);
    } else {
      spec.attention_factor =
          spec.factor <= 1.0 ? 1.0
                             : std::sqrt(1 + std::log(spec.factor) /
                                                 std::log(static_cast<double>(spec.original_max_positions)));
    }
  } else {
    fail(ErrorKind::kUnsupportedOption,
         scaling.path() + ": field '" + type_key + "': rope type '" + spec.type +
             "' is not supported (supported: " + kSupportedRopeTypes + ")");
  }
  if (spec.factor <= 0) scaling.reject("factor", "must be positive");
}

}  // namespace

RopeSpec read_rope_parameters(const ConfigReader& config, const ConfigReader* params, int64_t head_dim,
                              const RopeDefaults& defaults) {
  RopeSpec spec;
  spec.max_positions = defaults.max_positions;
  const double partial =
      params != nullptr && params->has("partial_rotary_factor")
          ? params->number("partial_rotary_factor", std::nullopt)
          : config.number(defaults.partial_key, defaults.partial_rotary_factor);
  if (partial <= 0 || partial > 1) config.reject(defaults.partial_key, "must be in (0, 1]");
  spec.rotary_dim = static_cast<int64_t>(static_cast<double>(head_dim) * partial);
  if (spec.rotary_dim <= 0 || spec.rotary_dim % 2 != 0)
    fail(ErrorKind::kCheckpoint, config.path() + ": rotary dimension " + std::to_string(spec.rotary_dim) +
                                     " must be a positive even number");
  const double top_theta = config.number(defaults.theta_key, defaults.theta);
  spec.theta = params != nullptr ? params->number("rope_theta", top_theta) : top_theta;
  if (params != nullptr) read_scaling(config, *params, defaults, spec);
  if (spec.type == "proportional") {  // transformers: int(partial * head_dim // 2) pairs rotate
    spec.rotated_pairs = static_cast<int64_t>(std::floor(partial * static_cast<double>(head_dim) / 2));
    spec.rotary_dim = head_dim;
  }
  if (spec.theta <= 0) config.reject("rope_theta", "must be positive");
  return spec;
}

RopeSpec read_rope_spec(const ConfigReader& config, int64_t head_dim, const RopeDefaults& defaults) {
  if (config.has("rope_parameters")) {
    const ConfigReader params = config.object("rope_parameters");
    return read_rope_parameters(config, &params, head_dim, defaults);
  }
  if (config.has("rope_scaling")) {
    const ConfigReader params = config.object("rope_scaling");
    return read_rope_parameters(config, &params, head_dim, defaults);
  }
  return read_rope_parameters(config, nullptr, head_dim, defaults);
}

RopeSpec read_rope_spec(const ConfigReader& config, int64_t head_dim, double default_theta) {
  RopeDefaults defaults;
  defaults.theta = default_theta;
  defaults.max_positions = config.integer("max_position_embeddings", 2048, 1, int64_t{1} << 30);
  return read_rope_spec(config, head_dim, defaults);
}

bool rope_depends_on_length(const RopeSpec& spec) { return spec.type == "longrope" || spec.type == "dynamic"; }

std::vector<float> rope_inverse_frequencies(const RopeSpec& spec, int64_t seq_len) {
  const int64_t half = spec.rotary_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  float base = static_cast<float>(spec.theta);
  if (spec.type == "dynamic" && seq_len > spec.max_positions) {
    const double dim = static_cast<double>(spec.rotary_dim);
    const double scaled = spec.theta * std::pow(spec.factor * static_cast<double>(seq_len) /
                                                        static_cast<double>(spec.max_positions) -
                                                    (spec.factor - 1),
                                                dim / (dim - 2));
    base = static_cast<float>(scaled);
  }
  std::vector<float> powers(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(spec.rotary_dim);
    powers[i] = std::pow(base, exponent);
    inv_freq[i] = 1.0f / powers[i];
  }
  if (spec.type == "linear") {
    for (float& f : inv_freq) f /= static_cast<float>(spec.factor);
  } else if (spec.type == "proportional") {
    for (int64_t i = 0; i < half; ++i)
      inv_freq[i] = i < spec.rotated_pairs ? inv_freq[i] / static_cast<float>(spec.factor) : 0.0f;
  } else if (spec.type == "longrope") {
    const bool long_context = seq_len > spec.original_max_positions;
    const std::vector<double>& factors = long_context ? spec.long_factor : spec.short_factor;
    for (int64_t i = 0; i < half; ++i) inv_freq[i] = 1.0f / (static_cast<float>(factors[i]) * powers[i]);
  } else if (spec.type == "yarn") {
    // Mirrors transformers' _compute_yarn_parameters.
    const double dim = static_cast<double>(spec.rotary_dim);
    const auto correction_dim = [&](double rotations) {
      return (dim * std::log(static_cast<double>(spec.original_max_positions) / (rotations * 2 * std::numbers::pi))) /
             (2 * std::log(spec.theta));
    };
    double low = correction_dim(spec.beta_fast), high = correction_dim(spec.beta_slow);
    if (spec.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dim - 1);
    if (low == high) high += 0.001;
    const float factor = static_cast<float>(spec.factor);
    for (int64_t i = 0; i < half; ++i) {
      const float ramp = std::clamp((static_cast<float>(i) - static_cast<float>(low)) /
                                        static_cast<float>(high - low),
                                    0.0f, 1.0f);
      const float extrapolation_factor = 1.0f - ramp;
      const float interpolation = 1.0f / (factor * powers[i]);
      const float extrapolation = 1.0f / powers[i];
      inv_freq[i] = interpolation * (1.0f - extrapolation_factor) + extrapolation * extrapolation_factor;
    }
  } else if (spec.type == "llama3") {
    // Mirrors transformers' _compute_llama3_parameters: low frequencies are divided by
    // the factor, high ones kept, the band between interpolated smoothly.
    const float factor = static_cast<float>(spec.factor);
    const float old_context = static_cast<float>(spec.original_max_positions);
    const float low_wavelen = old_context / static_cast<float>(spec.low_freq_factor);
    const float high_wavelen = old_context / static_cast<float>(spec.high_freq_factor);
    for (float& f : inv_freq) {
      const float wavelen = 2.0f * std::numbers::pi_v<float> / f;
      const float scaled = wavelen > low_wavelen ? f / factor : f;
      const bool medium = high_wavelen < low_wavelen && !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
      if (medium) {
        const float smooth = (old_context / wavelen - static_cast<float>(spec.low_freq_factor)) /
                             static_cast<float>(spec.high_freq_factor - spec.low_freq_factor);
        f = (1.0f - smooth) * scaled / factor + smooth * scaled;
      } else {
        f = scaled;
      }
    }
  }
  return inv_freq;
}

}  // namespace canrun
