// A read-only memory mapping of a whole file; weights are read in place from it.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace canrun {

class MappedFile {
 public:
  // Maps `path`, reading it all in now when `populate` (else page by page as touched); throws
  // Error(kIo) naming the path when it cannot.
  explicit MappedFile(const std::string& path, bool populate = true);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Lets the kernel drop this process's resident pages that lie wholly inside `bytes`, part of a
// read-only file mapping (a later read faults them in again from the file): for data that was
// copied out and is not read in place.
void release_pages(std::span<const std::byte> bytes);

}  // namespace canrun
