#include "plan/checksum.h"

#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, path.string() + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::vector<char> buffer(1 << 20);
  FileDigest digest;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<size_t>(in.gcount());
    XXH3_64bits_update(state.get(), buffer.data(), got);
    digest.bytes += got;
  }
  if (in.bad()) fail(ErrorKind::kIo, path.string() + ": read error");
  digest.xxh3 = hex64(XXH3_64bits_digest(state.get()));
  return digest;
}

}  // namespace canrun
