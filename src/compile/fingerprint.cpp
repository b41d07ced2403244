#include "compile/fingerprint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "plan/checksum.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

std::string read_prefix(const fs::path& path, std::streamsize count) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(count), '\0');
  if (!in.read(bytes.data(), count)) fail(ErrorKind::kIo, path.string() + ": cannot read its first bytes");
  return bytes;
}

// A safetensors header: its 8-byte length, then that many bytes of JSON.
std::string safetensors_header(const fs::path& path) {
  const std::string length_bytes = read_prefix(path, 8);
  uint64_t length = 0;
  std::memcpy(&length, length_bytes.data(), 8);
  if (length > fs::file_size(path) - 8) fail(ErrorKind::kCheckpoint, path.string() + ": header length past the file");
  return read_prefix(path, static_cast<std::streamsize>(8 + length));
}

std::string modification_time(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) fail(ErrorKind::kIo, path.string() + ": cannot stat");
  return std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

}  // namespace

std::string config_fingerprint(const std::string& model_dir) {
  const fs::path path = fs::path(model_dir) / "config.json";
  return xxh3_128_hex(read_prefix(path, static_cast<std::streamsize>(fs::file_size(path))));
}

std::string weights_fingerprint(const std::string& model_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(model_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".safetensors") || name == "model.safetensors.index.json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::string summary;
  for (const fs::path& file : files) {
    summary += file.filename().string() + "\n" + std::to_string(fs::file_size(file)) + "\n" +
               modification_time(file) + "\n";
    if (file.extension() == ".safetensors") summary += safetensors_header(file);
  }
  return xxh3_128_hex(summary);
}

}  // namespace canrun
