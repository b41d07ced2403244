// xxHash digests (Debian's libxxhash) for plan cache keys and the files of an entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace canrun {

// 32 lowercase hex chars: XXH3-128 of `bytes`, high half first (XXH128_canonical_t order).
std::string xxh3_128_hex(std::string_view bytes);

// 16 lowercase hex chars: XXH3-64 of `bytes`, as xxhash's canonical form and Python's
// xxhash.xxh3_64_hexdigest print it.
std::string xxh3_64_hex(std::string_view bytes);

struct FileDigest {
  uint64_t bytes = 0;
  std::string xxh3;  // xxh3_64_hex of the whole file
};

// Streams the file through XXH3-64; throws Error(kIo) naming the path.
FileDigest digest_file(const std::filesystem::path& path);
// 32 lowercase hex chars: XXH3-128 of the whole file; throws Error(kIo) naming the path.
std::string file_xxh3_128_hex(const std::filesystem::path& path);

}  // namespace canrun
