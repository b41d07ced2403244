// Replacing a file so that a crash at any moment leaves the old content or the new, whole.
#pragma once

#include <string>
#include <string_view>

namespace canrun {

// Writes `bytes` to a temporary file in the folder of `path`, flushes it to disk, renames it
// over `path` and flushes the folder. Throws Error(kIo) naming the path; leaves no temporary.
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace canrun
