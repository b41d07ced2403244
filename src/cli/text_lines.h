// The texts of a --file / --texts option: one per line.
#pragma once

#include <string>
#include <vector>

namespace canrun {

// Each line of the file (a final newline ends the last line rather than starting an empty one; a
// carriage return before a newline is dropped). Throws Error(kUsage) naming `option` when the file
// has no lines, Error(kIo) when it cannot be read.
std::vector<std::string> read_text_lines(const std::string& path, const std::string& option);

}  // namespace canrun
