// A folder of one's own under the system's temporary directory, removed with its content when
// the object goes (also when an exception leaves the scope).
#pragma once

#include <filesystem>
#include <string>

namespace canrun {

class TemporaryDirectory {
 public:
  // Makes <temp>/<prefix>XXXXXX (mkdtemp). Throws Error(kIo) naming the path.
  explicit TemporaryDirectory(const std::string& prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace canrun
