#include "util/temporary_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace canrun {

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    fail(ErrorKind::kIo, pattern + ": cannot create a temporary folder: " + std::strerror(errno));
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;  // a destructor must not throw; a leftover temporary folder is harmless
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace canrun
