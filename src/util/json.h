// JSON via nlohmann::json: reading outside files and texts within stated limits, with errors
// that name the file.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "util/error.h"

namespace canrun {

using Json = nlohmann::json;

// What an outside JSON document may be. nlohmann's parser is iterative, but copying, comparing
// and printing a document recurse once per level, so a document nesting 100,000 levels deep
// would overflow the stack long after it parsed; it is refused before parsing instead.
struct JsonLimits {
  size_t max_bytes = size_t{64} << 20;  // configs, manifests, indexes, catalog lines
  int max_depth = 64;                   // Hub configs and tokenizers nest under ten levels
};
inline constexpr JsonLimits kTokenizerJsonLimits{size_t{512} << 20, 64};  // large vocabularies

// Throws Error(kind) "<where>: ..." when `text` is larger or nests deeper than `limits`.
void check_json_limits(std::string_view text, const std::string& where, ErrorKind kind, const JsonLimits& limits);

// Parses `text` within `limits`; any failure (syntax, a number like 1e999 out of double's range,
// a limit) throws Error(kind) naming `where`.
template <class JsonType = Json>
JsonType parse_json(std::string_view text, const std::string& where, ErrorKind kind, const JsonLimits& limits = {}) {
  check_json_limits(text, where, kind, limits);
  try {
    return JsonType::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(kind, where + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    fail(kind, where + ": " + e.what());
  }
}

// Parses a whole JSON file within `limits`; throws Error(kind) naming the path on any failure.
Json read_json_file(const std::string& path, ErrorKind kind, const JsonLimits& limits = {});

// object[key] when object is an object and that field a string (a number of type Number),
// else `fallback`: for fields read from files, where a missing field and one of another type
// both end in the caller's own error, never in nlohmann's type_error.
std::string string_or(const Json& object, std::string_view key, std::string_view fallback);
template <typename Number>
Number number_or(const Json& object, std::string_view key, Number fallback) {
  if (!object.is_object()) return fallback;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return fallback;
  if (std::is_unsigned_v<Number> && !found->is_number_unsigned()) return fallback;
  return found->template get<Number>();
}

// Reads a whole regular file of at most `max_bytes` into a string; throws Error(kIo) naming the
// path (also for a FIFO, device or folder, which are refused rather than read).
std::string read_text_file(const std::string& path, size_t max_bytes = size_t{1} << 30);

}  // namespace canrun
