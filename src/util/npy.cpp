#include "util/npy.h"

#include <cstdint>
#include <fstream>
#include <regex>

#include "util/error.h"

namespace canrun {

void write_npy_f32(const std::string& path, const float* data, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to 64 bytes, ending in '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(length & 0xff));
  out.put(static_cast<char>(length >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(rows * cols * sizeof(float)));
  if (!out.flush()) fail(ErrorKind::kIo, path + ": cannot write");
}

NpyArray read_npy_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char preamble[10];
  if (!in.read(preamble, sizeof(preamble)) || std::string(preamble, 6) != "\x93NUMPY" || preamble[6] != 1)
    fail(ErrorKind::kIo, path + ": not a version 1.0 .npy file");
  const size_t length = static_cast<uint8_t>(preamble[8]) | static_cast<size_t>(static_cast<uint8_t>(preamble[9])) << 8;
  std::string header(length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  std::smatch match;
  static const std::regex kHeader(
      R"(\{'descr': '<f4', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \}\s*)");
  if (!in || !std::regex_match(header, match, kHeader))
    fail(ErrorKind::kIo, path + ": not a 2-D little-endian float32 C-order array");
  NpyArray array;
  array.rows = std::stoll(match[1]);
  array.cols = std::stoll(match[2]);
  array.values.resize(static_cast<size_t>(array.rows * array.cols));
  if (!in.read(reinterpret_cast<char*>(array.values.data()),
               static_cast<std::streamsize>(array.values.size() * sizeof(float))))
    fail(ErrorKind::kIo, path + ": ends before its " + std::to_string(array.values.size()) + " values");
  return array;
}

}  // namespace canrun
