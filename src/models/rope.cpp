#include "models/rope.h"

#include <cmath>
#include <numbers>

namespace canrun {
namespace {

const char* const kSupportedRopeTypes = "default, linear, llama3";

void read_scaling(const ConfigReader& scaling, RopeSpec& spec) {
  const std::string type_key = scaling.has("rope_type") ? "rope_type" : "type";
  spec.type = scaling.string(type_key, std::string("default"));
  if (spec.type == "default") return;
  if (spec.type == "linear") {
    spec.factor = scaling.number("factor", std::nullopt);
  } else if (spec.type == "llama3") {
    spec.factor = scaling.number("factor", std::nullopt);
    spec.low_freq_factor = scaling.number("low_freq_factor", std::nullopt);
    spec.high_freq_factor = scaling.number("high_freq_factor", std::nullopt);
    spec.original_max_positions = scaling.integer("original_max_position_embeddings", std::nullopt, 1,
                                                  int64_t{1} << 40);
    if (spec.high_freq_factor <= spec.low_freq_factor)
      scaling.reject("high_freq_factor", "must be greater than low_freq_factor");
  } else {
    fail(ErrorKind::kUnsupportedOption,
         scaling.path() + ": field '" + type_key + "': rope type '" + spec.type +
             "' is not supported (supported: " + kSupportedRopeTypes + ")");
  }
  if (spec.factor <= 0) scaling.reject("factor", "must be positive");
}

}  // namespace

RopeSpec read_rope_spec(const ConfigReader& config, int64_t rotary_dim, double default_theta) {
  RopeSpec spec;
  spec.rotary_dim = rotary_dim;
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    fail(ErrorKind::kCheckpoint, config.path() + ": rotary dimension " + std::to_string(rotary_dim) +
                                     " must be a positive even number");
  if (config.has("rope_parameters")) {
    const ConfigReader params = config.object("rope_parameters");
    spec.theta = params.number("rope_theta", config.number("rope_theta", default_theta));
    read_scaling(params, spec);
  } else {
    spec.theta = config.number("rope_theta", default_theta);
    if (config.has("rope_scaling")) read_scaling(config.object("rope_scaling"), spec);
  }
  if (spec.theta <= 0) config.reject("rope_theta", "must be positive");
  return spec;
}

std::vector<float> rope_inverse_frequencies(const RopeSpec& spec) {
  const int64_t half = spec.rotary_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const float base = static_cast<float>(spec.theta);
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(spec.rotary_dim);
    inv_freq[i] = 1.0f / std::pow(base, exponent);
  }
  if (spec.type == "linear") {
    for (float& f : inv_freq) f /= static_cast<float>(spec.factor);
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
      const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
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
