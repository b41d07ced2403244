// Typed, range-checked access to a config JSON object. Every failure names the
// file and the field, e.g. "config.json: field 'hidden_size': must be >= 1".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/json.h"

namespace canrun {

class ConfigReader {
 public:
  ConfigReader(const Json& json, std::string path);

  // True when the field is present and not null (transformers treats null as absent).
  bool has(const std::string& key) const;
  // `fallback` is used when the field is absent; without one the field is required.
  int64_t integer(const std::string& key, std::optional<int64_t> fallback, int64_t min_value,
                  int64_t max_value) const;
  double number(const std::string& key, std::optional<double> fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, std::optional<std::string> fallback) const;
  // A nested object (e.g. rope_scaling) read with the same rules; path "config.json: rope_scaling".
  ConfigReader object(const std::string& key) const;

  const Json& json() const { return json_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void reject(const std::string& key, const std::string& problem) const;
  // A value as an error message shows it: its JSON, cut after 100 bytes.
  static std::string shown(const Json& value);

 private:
  const Json& field(const std::string& key) const;
  Json json_;
  std::string path_;
};

// The error of a config field: "PATH: field 'KEY': PROBLEM" (Error kCheckpoint).
[[noreturn]] void reject_config_field(const std::string& path, const std::string& key, const std::string& problem);

}  // namespace canrun
