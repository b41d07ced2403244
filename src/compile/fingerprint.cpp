#include "compile/fingerprint.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "plan/checksum.h"
#include "util/error.h"
#include <unistd.h>

namespace canrun {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, path.string() + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Names the file's identity: a file rewritten, replaced or touched gets a new name.
std::string identity(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) fail(ErrorKind::kIo, path.string() + ": cannot stat");
  const std::string text = std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" +
                           std::to_string(info.st_size) + ":" + std::to_string(info.st_mtim.tv_sec) + "." +
                           std::to_string(info.st_mtim.tv_nsec) + ":" + std::to_string(info.st_ctim.tv_sec) + "." +
                           std::to_string(info.st_ctim.tv_nsec);
  return xxh3_128_hex(text);
}

bool is_digest(const std::string& text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The file's content digest, from the memo when it holds one for this identity.
std::string content_digest(const fs::path& path, const fs::path& memo_dir) {
  if (memo_dir.empty()) return file_xxh3_128_hex(path);
  const fs::path memo = memo_dir / identity(path);
  std::error_code error;
  if (fs::is_regular_file(memo, error)) {
    std::string remembered = read_all(memo);
    if (is_digest(remembered)) return remembered;
  }
  const std::string digest = file_xxh3_128_hex(path);
  // Written aside and renamed, so a reader never sees half a digest; a memo that cannot be
  // written only costs the next run the hash again.
  fs::create_directories(memo_dir, error);
  const fs::path staged = memo_dir / (memo.filename().string() + ".tmp-" + std::to_string(::getpid()));
  bool written = false;
  {
    std::ofstream out(staged, std::ios::binary);
    written = static_cast<bool>(out << digest << std::flush);
  }
  if (written) fs::rename(staged, memo, error);
  if (!written || error) fs::remove(staged, error);
  return digest;
}

}  // namespace

std::string config_fingerprint(const std::string& model_dir) {
  return xxh3_128_hex(read_all(fs::path(model_dir) / "config.json"));
}

std::string weights_fingerprint(const std::string& model_dir, const fs::path& memo_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(model_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".safetensors") || name == "model.safetensors.index.json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::string summary;
  for (const fs::path& file : files) summary += file.filename().string() + "\n" + content_digest(file, memo_dir) + "\n";
  return xxh3_128_hex(summary);
}

}  // namespace canrun
