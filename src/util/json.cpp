#include "util/json.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canrun {
namespace {

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

void check_json_limits(std::string_view text, const std::string& where, ErrorKind kind, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    fail(kind, where + ": " + std::to_string(text.size()) + " bytes, larger than the " + mib(limits.max_bytes) +
                   " a JSON document may be");
  // Brackets outside strings; a malformed document is left for the parser to describe.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth)
        fail(kind, where + ": nested deeper than " + std::to_string(limits.max_depth) + " levels at byte " +
                       std::to_string(i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  // Only regular files (or links to them): reading a FIFO would wait for a writer forever.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    fail(ErrorKind::kIo, path + ": not a regular file (a FIFO, device or folder)");
  if (!error && std::filesystem::exists(status)) {
    const uintmax_t size = std::filesystem::file_size(path, error);
    if (!error && size > max_bytes)
      fail(ErrorKind::kIo, path + ": " + std::to_string(size) + " bytes, larger than the " + mib(max_bytes) +
                               " canrun reads of such a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(ErrorKind::kIo, path + ": read error");
  return buffer.str();
}

Json read_json_file(const std::string& path, ErrorKind kind, const JsonLimits& limits) {
  return parse_json(read_text_file(path, limits.max_bytes), path, kind, limits);
}

std::string string_or(const Json& object, std::string_view key, std::string_view fallback) {
  if (!object.is_object()) return std::string(fallback);
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string(fallback);
}

}  // namespace canrun
