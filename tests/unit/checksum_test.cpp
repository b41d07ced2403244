// File digests hash a file through mapped windows: across window boundaries they equal the digest
// of the same bytes in one piece.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "plan/checksum.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

TEST(Checksum, AFileOfSeveralWindowsHashesAsItsBytesInOnePiece) {
  TemporaryDirectory scratch("canrun-checksum-");
  const std::filesystem::path path = scratch.path() / "weights.bin";
  // Two 8 MiB windows and a part of a third, no two windows alike.
  std::string bytes((size_t{17} << 20) + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(file_xxh3_128_hex(path), xxh3_128_hex(bytes));
  const FileDigest digest = digest_file(path);
  EXPECT_EQ(digest.bytes, bytes.size());
  EXPECT_EQ(digest.xxh3, xxh3_64_hex(bytes));
}

}  // namespace
}  // namespace canrun
