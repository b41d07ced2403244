#include "plan/checksum.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "util/error.h"

namespace canrun {
namespace {

std::string hex(const unsigned char* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    text += kDigits[data[i] >> 4];
    text += kDigits[data[i] & 15];
  }
  return text;
}

std::string hex64(XXH64_hash_t hash) {
  XXH64_canonical_t canonical;
  XXH64_canonicalFromHash(&canonical, hash);
  return hex(canonical.digest, sizeof canonical.digest);
}

}  // namespace

std::string xxh3_128_hex(std::string_view bytes) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  return hex(canonical.digest, sizeof canonical.digest);
}

std::string xxh3_64_hex(std::string_view bytes) { return hex64(XXH3_64bits(bytes.data(), bytes.size())); }

namespace {

// Small enough that a window's pages, resident while it is hashed, stay a small part of a
// process's peak memory (a small encoder's whole checkpoint fits in 64 MiB); a map and unmap per
// 8 MiB costs nothing next to the hash.
constexpr uint64_t kWindow = uint64_t{8} << 20;

// Calls update(data, size) over the whole file in order, one mapped window at a time: packed
// weights and checkpoints run to gigabytes, so a copy into a buffer would cost as much as the
// hash, and a window unmapped after use keeps them out of this process's resident memory.
// Returns the file's size.
template <typename Update>
uint64_t hash_windows(const std::filesystem::path& path, const Update& update) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorKind::kIo, path.string() + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    fail(ErrorKind::kIo, path.string() + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  for (uint64_t offset = 0; offset < size; offset += kWindow) {
    const uint64_t length = std::min(kWindow, size - offset);
    void* mapping = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(offset));
    if (mapping == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      fail(ErrorKind::kIo, path.string() + ": cannot map: " + std::strerror(saved));
    }
    ::madvise(mapping, length, MADV_SEQUENTIAL);
    update(mapping, length);
    ::munmap(mapping, length);
  }
  ::close(fd);
  return size;
}

struct StateFree {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};
using State = std::unique_ptr<XXH3_state_t, StateFree>;

}  // namespace

FileDigest digest_file(const std::filesystem::path& path) {
  const State state(XXH3_createState());
  XXH3_64bits_reset(state.get());
  FileDigest digest;
  digest.bytes = hash_windows(path, [&](const void* data, size_t size) { XXH3_64bits_update(state.get(), data, size); });
  digest.xxh3 = hex64(XXH3_64bits_digest(state.get()));
  return digest;
}

std::string file_xxh3_128_hex(const std::filesystem::path& path) {
  const State state(XXH3_createState());
  XXH3_128bits_reset(state.get());
  hash_windows(path, [&](const void* data, size_t size) { XXH3_128bits_update(state.get(), data, size); });
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state.get()));
  return hex(canonical.digest, sizeof canonical.digest);
}

}  // namespace canrun
