#include "checkpoint/config_reader.h"

#include <cmath>

namespace canrun {
namespace {

// The longest string a config field may hold (model_type, rope_type, hidden_act... are words).
constexpr size_t kMaxStringBytes = 1024;

}  // namespace

std::string ConfigReader::shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() <= 100 ? text : text.substr(0, 100) + "...";
}

ConfigReader::ConfigReader(const Json& json, std::string path) : json_(json), path_(std::move(path)) {
  if (!json_.is_object()) fail(ErrorKind::kCheckpoint, path_ + ": must be a JSON object");
}

void reject_config_field(const std::string& path, const std::string& key, const std::string& problem) {
  fail(ErrorKind::kCheckpoint, path + ": field '" + key + "': " + problem);
}

void ConfigReader::reject(const std::string& key, const std::string& problem) const {
  reject_config_field(path_, key, problem);
}

bool ConfigReader::has(const std::string& key) const {
  return json_.contains(key) && !json_[key].is_null();
}

const Json& ConfigReader::field(const std::string& key) const {
  if (!has(key)) reject(key, "is required but missing");
  return json_[key];
}

int64_t ConfigReader::integer(const std::string& key, std::optional<int64_t> fallback, int64_t min_value,
                              int64_t max_value) const {
  if (!has(key) && fallback) return *fallback;
  const Json& value = field(key);
  // Configs written by Python sometimes store whole numbers as 4096.0.
  if (!value.is_number_integer() &&
      !(value.is_number_float() && std::floor(value.get<double>()) == value.get<double>()))
    reject(key, "must be an integer, got " + shown(value));
  const double as_double = value.get<double>();
  if (as_double < static_cast<double>(min_value) || as_double > static_cast<double>(max_value))
    reject(key, "value " + shown(value) + " is outside [" + std::to_string(min_value) + ", " +
                    std::to_string(max_value) + "]");
  return static_cast<int64_t>(as_double);
}

double ConfigReader::number(const std::string& key, std::optional<double> fallback) const {
  if (!has(key) && fallback) return *fallback;
  const Json& value = field(key);
  if (!value.is_number()) reject(key, "must be a number, got " + shown(value));
  const double result = value.get<double>();
  if (!std::isfinite(result)) reject(key, "must be finite");
  return result;
}

bool ConfigReader::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const Json& value = field(key);
  if (!value.is_boolean()) reject(key, "must be true or false, got " + shown(value));
  return value.get<bool>();
}

std::string ConfigReader::string(const std::string& key, std::optional<std::string> fallback) const {
  if (!has(key) && fallback) return *fallback;
  const Json& value = field(key);
  if (!value.is_string()) reject(key, "must be a string, got " + shown(value));
  if (value.get_ref<const std::string&>().size() > kMaxStringBytes)
    reject(key, "is " + std::to_string(value.get_ref<const std::string&>().size()) + " bytes long, more than " +
                    std::to_string(kMaxStringBytes) + ": " + shown(value));
  return value.get<std::string>();
}

ConfigReader ConfigReader::object(const std::string& key) const {
  const Json& value = field(key);
  if (!value.is_object()) reject(key, "must be an object, got " + shown(value));
  return ConfigReader(value, path_ + ": " + key);
}

}  // namespace canrun
