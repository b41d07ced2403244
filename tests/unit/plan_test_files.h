// Whole-file reads and writes for the plan cache tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace canrun {

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace canrun
