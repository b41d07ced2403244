#include "cli/text_lines.h"

#include "util/error.h"
#include "util/json.h"

namespace canrun {

std::vector<std::string> read_text_lines(const std::string& path, const std::string& option) {
  const std::string content = read_text_file(path);
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < content.size()) {
    size_t end = content.find('\n', begin);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    begin = end + 1;
  }
  if (lines.empty()) fail(ErrorKind::kUsage, option + " " + path + ": has no lines");
  return lines;
}

}  // namespace canrun
