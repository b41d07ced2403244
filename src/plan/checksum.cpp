#include "plan/checksum.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

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

FileDigest digest_file(const std::filesystem::path& path) {
  // Hashed through a mapping, not read(): packed weights run to gigabytes and are checked on
  // every warm start, so the copy into a buffer would cost as much as the hash.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorKind::kIo, path.string() + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    fail(ErrorKind::kIo, path.string() + ": cannot stat: " + std::strerror(errno));
  }
  FileDigest digest;
  digest.bytes = static_cast<uint64_t>(info.st_size);
  if (digest.bytes == 0) {
    ::close(fd);
    digest.xxh3 = hex64(XXH3_64bits(nullptr, 0));
    return digest;
  }
  void* mapping = ::mmap(nullptr, digest.bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int saved = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) fail(ErrorKind::kIo, path.string() + ": cannot map: " + std::strerror(saved));
  ::madvise(mapping, digest.bytes, MADV_SEQUENTIAL);
  digest.xxh3 = hex64(XXH3_64bits(mapping, digest.bytes));
  ::munmap(mapping, digest.bytes);
  return digest;
}

}  // namespace canrun
