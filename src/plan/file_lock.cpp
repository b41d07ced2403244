#include "plan/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace canrun {

FileLock::FileLock(const std::filesystem::path& path) : FileLock(path, true) {}

FileLock FileLock::try_lock(const std::filesystem::path& path) { return FileLock(path, false); }

FileLock::FileLock(std::filesystem::path path, bool wait) : path_(std::move(path)) {
  // A pruner may unlink the file between our open and our flock; then the lock we got guards
  // nothing, so check that the path still names the file we locked, and retry if not.
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail(ErrorKind::kIo, path_.string() + ": cannot open lock file: " + std::strerror(errno));
    int rc;
    do rc = ::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int error = errno;
      ::close(fd);
      if (!wait && error == EWOULDBLOCK) return;
      fail(ErrorKind::kIo, path_.string() + ": cannot lock: " + std::strerror(error));
    }
    struct stat opened {}, named {};
    if (::fstat(fd, &opened) == 0 && ::stat(path_.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
        opened.st_dev == named.st_dev) {
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
}

void FileLock::remove_file() {
  if (fd_ >= 0) ::unlink(path_.c_str());
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace canrun
