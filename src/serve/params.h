// Query-string parameters of the JSON API, validated: unknown or repeated names, over-long
// values and malformed numbers are refused with a 400 that names the parameter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace canrun {

using QueryParams = std::multimap<std::string, std::string>;

// Longest value any parameter takes; longer ones are refused rather than searched for.
constexpr size_t kMaxParamLength = 200;

class ParamReader {
 public:
  // Throws HttpError(400) for a name outside `known`, a repeated name or an over-long value.
  ParamReader(const QueryParams& params, const std::string& endpoint, const std::vector<std::string>& known);

  // The value, or `fallback` when absent.
  std::string text(const std::string& name, const std::string& fallback = "") const;
  // The value, which must be one of `choices`; `fallback` when absent.
  std::string choice(const std::string& name, const std::vector<std::string>& choices,
                     const std::string& fallback) const;
  // A base-10 integer in [min, max]; `fallback` when absent.
  int64_t integer(const std::string& name, int64_t min, int64_t max, int64_t fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

// "a, b, c"
std::string join(const std::vector<std::string>& items);

}  // namespace canrun
