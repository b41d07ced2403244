#include "util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "util/error.h"

namespace canrun {

MappedFile::MappedFile(const std::string& path, bool populate) : path_(path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(ErrorKind::kIo, path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail(ErrorKind::kIo, path + ": not a regular file (a FIFO, device or folder)");
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    // Populating up front puts the cost of reading weights into load time, where it belongs.
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    if (mapping == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      fail(ErrorKind::kIo, path + ": cannot map: " + std::strerror(saved));
    }
    data_ = static_cast<const std::byte*>(mapping);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

void release_pages(std::span<const std::byte> bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  // Only a hint: when the kernel declines, the pages merely stay resident.
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace canrun
