#include "serve/params.h"

#include <algorithm>
#include <charconv>

#include "serve/http_error.h"

namespace canrun {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

ParamReader::ParamReader(const QueryParams& params, const std::string& endpoint,
                         const std::vector<std::string>& known) {
  for (const auto& [name, value] : params) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw HttpError(400, "unknown parameter '" + name.substr(0, 40) + "' for " + endpoint +
                               (known.empty() ? " (it takes none)" : " (known: " + join(known) + ")"));
    if (!values_.emplace(name, value).second)
      throw HttpError(400, "parameter '" + name + "' is given more than once");
    if (value.size() > kMaxParamLength)
      throw HttpError(400, "parameter '" + name + "' is longer than " + std::to_string(kMaxParamLength) +
                               " characters");
  }
}

std::string ParamReader::text(const std::string& name, const std::string& fallback) const {
  const auto found = values_.find(name);
  return found == values_.end() ? fallback : found->second;
}

std::string ParamReader::choice(const std::string& name, const std::vector<std::string>& choices,
                                const std::string& fallback) const {
  const std::string value = text(name, fallback);
  if (std::find(choices.begin(), choices.end(), value) == choices.end())
    throw HttpError(400, "parameter '" + name + "': '" + value + "' is not one of " + join(choices));
  return value;
}

int64_t ParamReader::integer(const std::string& name, int64_t min, int64_t max, int64_t fallback) const {
  const auto found = values_.find(name);
  if (found == values_.end()) return fallback;
  const std::string& value = found->second;
  int64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < min || number > max)
    throw HttpError(400, "parameter '" + name + "': '" + value + "' is not an integer from " + std::to_string(min) +
                             " to " + std::to_string(max));
  return number;
}

}  // namespace canrun
