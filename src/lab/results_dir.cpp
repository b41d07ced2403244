#include "lab/results_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "lab/atomic_file.h"
#include "lab/dataset_card.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

// Holds an exclusive flock on `dir`/.canrun.lock for its lifetime.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    const std::string path = dir + "/.canrun.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) fail(ErrorKind::kIo, path + ": cannot lock the dataset folder");
  }
  ~DirLock() { ::close(fd_); }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::vector<DatasetFile> list_dataset_files(const std::string& dir) {
  std::vector<DatasetFile> files;
  if (!fs::is_directory(dir)) return files;
  for (const fs::directory_entry& item : fs::directory_iterator(dir)) {
    const std::string name = item.path().filename().string();
    if (!item.is_regular_file() || !name.ends_with(".parquet") || name.starts_with(".")) continue;
    const std::string stem = name.substr(0, name.size() - std::string(".parquet").size());
    const size_t separator = stem.find("__");
    if (separator == std::string::npos) continue;  // not one of ours
    files.push_back({{stem.substr(0, separator), stem.substr(separator + 2)}, item.path().string()});
  }
  std::sort(files.begin(), files.end(), [](const DatasetFile& a, const DatasetFile& b) { return a.path < b.path; });
  return files;
}

std::vector<ResultRow> read_pair_rows(const std::string& dir, const VersionPair& pair) {
  const std::string path = (fs::path(dir) / dataset_file_name(pair)).string();
  return fs::exists(path) ? read_dataset(path) : std::vector<ResultRow>{};
}

void record_row(const std::string& dir, const ResultRow& row) {
  fs::create_directories(dir);
  const DirLock lock(dir);
  const VersionPair pair{row.compiler_version, row.library_version};
  std::vector<ResultRow> rows = read_pair_rows(dir, pair);
  std::erase_if(rows, [&](const ResultRow& old) { return old.model_id == row.model_id; });
  rows.push_back(row);
  write_dataset((fs::path(dir) / dataset_file_name(pair)).string(), rows);
  std::vector<std::string> names;
  for (const DatasetFile& file : list_dataset_files(dir)) names.push_back(fs::path(file.path).filename().string());
  write_file_atomically((fs::path(dir) / "README.md").string(), dataset_card(names));
}

}  // namespace canrun
