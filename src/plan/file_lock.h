// An exclusive flock(2) on a lock file, held for the object's lifetime.
#pragma once

#include <filesystem>

namespace canrun {

class FileLock {
 public:
  // Blocks until the lock is held; creates the file. Throws Error(kIo) naming the path.
  explicit FileLock(const std::filesystem::path& path);
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // The lock when no other process holds it, else an object that holds nothing (held() false).
  static FileLock try_lock(const std::filesystem::path& path);
  bool held() const { return fd_ >= 0; }
  // Deletes the lock file while holding it; lockers that opened the old file retry on a new one.
  void remove_file();

  FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

 private:
  FileLock(std::filesystem::path path, bool wait);
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace canrun
