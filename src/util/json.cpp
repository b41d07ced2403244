#include "util/json.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canrun {

std::string read_text_file(const std::string& path) {
  // Only regular files (or links to them): reading a FIFO would wait for a writer forever.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    fail(ErrorKind::kIo, path + ": not a regular file (a FIFO, device or folder)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(ErrorKind::kIo, path + ": read error");
  return buffer.str();
}

Json read_json_file(const std::string& path, ErrorKind kind) {
  const std::string text = read_text_file(path);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    fail(kind, path + ": invalid JSON at byte " + std::to_string(e.byte) + ": " +
                   e.what());
  }
}

}  // namespace canrun
