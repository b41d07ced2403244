#include "util/json.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace canrun {

std::string read_text_file(const std::string& path) {
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
