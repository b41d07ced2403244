#include "embed/pooling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "checkpoint/config_reader.h"
#include "util/error.h"

namespace canrun {
namespace {

// The names sentence-transformers' Pooling accepts, and its older flags in the order it reads them.
constexpr std::pair<const char*, PoolingMode> kModes[] = {
    {"cls", PoolingMode::kCls},
    {"max", PoolingMode::kMax},
    {"mean", PoolingMode::kMean},
    {"mean_sqrt_len_tokens", PoolingMode::kMeanSqrtLen},
    {"weightedmean", PoolingMode::kWeightedMean},
    {"lasttoken", PoolingMode::kLastToken},
};
constexpr std::pair<const char*, PoolingMode> kFlags[] = {
    {"pooling_mode_cls_token", PoolingMode::kCls},
    {"pooling_mode_max_tokens", PoolingMode::kMax},
    {"pooling_mode_mean_tokens", PoolingMode::kMean},
    {"pooling_mode_mean_sqrt_len_tokens", PoolingMode::kMeanSqrtLen},
    {"pooling_mode_weightedmean_tokens", PoolingMode::kWeightedMean},
    {"pooling_mode_lasttoken", PoolingMode::kLastToken},
};

std::string known_modes() {
  std::string names;
  for (const auto& [name, mode] : kModes) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

PoolingMode mode_named(const Json& value, const std::string& path) {
  if (value.is_string())
    for (const auto& [name, mode] : kModes)
      if (value.get<std::string>() == name) return mode;
  reject_config_field(path, "pooling_mode", value.dump() + " is not a pooling mode (known: " + known_modes() + ")");
}

}  // namespace

std::string pooling_mode_name(PoolingMode mode) {
  for (const auto& [name, known] : kModes)
    if (known == mode) return name;
  return "?";
}

PoolingConfig read_pooling_config(const Json& json, const std::string& path, int64_t hidden) {
  if (!json.is_object()) fail(ErrorKind::kCheckpoint, path + ": expected an object, got " + json.type_name());
  PoolingConfig config;
  config.dimension = hidden;
  for (const char* key : {"embedding_dimension", "word_embedding_dimension"}) {
    if (!json.contains(key)) continue;
    if (!json[key].is_number_integer() || json[key].get<int64_t>() != hidden)
      reject_config_field(path, key,
                          json[key].dump() + " does not match the model's hidden_size of " + std::to_string(hidden));
  }
  if (json.contains("include_prompt")) {
    if (!json["include_prompt"].is_boolean()) reject_config_field(path, "include_prompt", "expected true or false");
    config.include_prompt = json["include_prompt"].get<bool>();
  }
  for (const auto& item : json.items()) {
    const std::string& key = item.key();
    if (key.rfind("pooling_mode_", 0) != 0) continue;
    const bool known = std::any_of(std::begin(kFlags), std::end(kFlags), [&](const auto& f) { return key == f.first; });
    if (!known) reject_config_field(path, key, "not a pooling mode flag (known modes: " + known_modes() + ")");
    if (!item.value().is_boolean()) reject_config_field(path, key, "expected true or false");
  }
  if (json.contains("pooling_mode")) {
    const Json& value = json["pooling_mode"];
    config.modes.clear();
    if (value.is_array()) {
      for (const Json& name : value) config.modes.push_back(mode_named(name, path));
    } else {
      config.modes.push_back(mode_named(value, path));
    }
    if (config.modes.empty()) reject_config_field(path, "pooling_mode", "names no mode");
    return config;
  }
  std::vector<PoolingMode> flagged;
  for (const auto& [key, mode] : kFlags)
    if (json.contains(key) && json[key].get<bool>()) flagged.push_back(mode);
  if (!flagged.empty()) config.modes = std::move(flagged);
  return config;
}

std::vector<float> pool(const PoolingConfig& config, std::span<const float> hidden, int64_t tokens,
                        int64_t prompt_tokens) {
  const int64_t width = config.dimension;
  if (tokens < 1 || static_cast<int64_t>(hidden.size()) != tokens * width)
    fail(ErrorKind::kRuntime, "pooling: " + std::to_string(hidden.size()) + " hidden values for " +
                                  std::to_string(tokens) + " tokens of " + std::to_string(width));
  // The tokens pooled: all, or those after the prompt (none left: the last one, as a masked
  // sequence's fallback would be undefined; sentence-transformers gives zeros and the clamp).
  const int64_t first = config.include_prompt ? 0 : std::min(prompt_tokens, tokens);
  const int64_t counted = tokens - first;
  const auto row = [&](int64_t t) { return hidden.data() + t * width; };
  std::vector<float> out;
  out.reserve(config.modes.size() * static_cast<size_t>(width));
  for (PoolingMode mode : config.modes) {
    std::vector<double> acc(static_cast<size_t>(width), 0.0);
    switch (mode) {
      case PoolingMode::kCls:
      case PoolingMode::kLastToken: {
        if (counted == 0) break;  // every token masked: zeros
        const float* chosen = row(mode == PoolingMode::kCls ? first : tokens - 1);
        std::copy(chosen, chosen + width, acc.begin());
        break;
      }
      case PoolingMode::kMax:
        std::fill(acc.begin(), acc.end(), -std::numeric_limits<double>::infinity());
        for (int64_t t = first; t < tokens; ++t)
          for (int64_t d = 0; d < width; ++d) acc[d] = std::max<double>(acc[d], row(t)[d]);
        break;
      case PoolingMode::kMean:
      case PoolingMode::kMeanSqrtLen: {
        for (int64_t t = first; t < tokens; ++t)
          for (int64_t d = 0; d < width; ++d) acc[d] += row(t)[d];
        const double count = std::max<double>(static_cast<double>(counted), 1e-9);
        const double denominator = mode == PoolingMode::kMean ? count : std::sqrt(count);
        for (double& v : acc) v /= denominator;
        break;
      }
      case PoolingMode::kWeightedMean: {
        // Token t weighs t + 1, its position in the input (a left-out prompt keeps the others' weights).
        double weights = 0;
        for (int64_t t = first; t < tokens; ++t) {
          weights += static_cast<double>(t + 1);
          for (int64_t d = 0; d < width; ++d) acc[d] += static_cast<double>(t + 1) * row(t)[d];
        }
        for (double& v : acc) v /= std::max(weights, 1e-9);
        break;
      }
    }
    for (double v : acc) out.push_back(static_cast<float>(v));
  }
  return out;
}

}  // namespace canrun
