#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace canrun {
namespace {

[[noreturn]] void fail_io(const std::string& path, const std::string& what) {
  fail(ErrorKind::kIo, path + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail_io(path, "cannot write");
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::filesystem::path target(path);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  // Same folder, so the rename stays on one file system and is atomic.
  const std::string temporary =
      (folder / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(temporary, "cannot create");
  try {
    write_all(fd, bytes, temporary);
    if (::fsync(fd) != 0) fail_io(temporary, "cannot flush to disk");
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  const auto remove_and_fail = [&](const std::string& where, const std::string& what) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    fail_io(where, what);
  };
  if (::close(fd) != 0) remove_and_fail(temporary, "cannot close");
  if (::rename(temporary.c_str(), path.c_str()) != 0) remove_and_fail(path, "cannot replace");
  // The rename itself is durable only once the folder's entry is on disk.
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd < 0) fail_io(folder.string(), "cannot open folder to flush it");
  const int synced = ::fsync(folder_fd);
  ::close(folder_fd);
  if (synced != 0) fail_io(folder.string(), "cannot flush folder");
}

}  // namespace canrun
