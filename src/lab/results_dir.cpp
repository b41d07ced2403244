#include "lab/results_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

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

// The pair's file in `dir`, or its part `part`.
std::string pair_path(const std::string& dir, const VersionPair& pair, const std::string& part) {
  const std::string file = dataset_file_name(pair);
  if (part.empty()) return (fs::path(dir) / file).string();
  return (fs::path(dir) / file.substr(0, file.size() - std::string(".parquet").size()) / (part + ".parquet")).string();
}

// The dataset card, for the pairs' files in `dir`.
void write_card(const std::string& dir) {
  std::vector<std::string> names;
  for (const DatasetFile& file : list_dataset_files(dir)) names.push_back(fs::path(file.path).filename().string());
  write_file_atomically((fs::path(dir) / "README.md").string(), dataset_card(names));
}

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

std::vector<ResultRow> read_pair_rows(const std::string& dir, const VersionPair& pair, const std::string& part) {
  const std::string path = pair_path(dir, pair, part);
  return fs::exists(path) ? read_dataset(path) : std::vector<ResultRow>{};
}

void record_row(const std::string& dir, const ResultRow& row, const std::string& part) {
  fs::create_directories(dir);
  const DirLock lock(dir);
  const VersionPair pair{row.compiler_version, row.library_version};
  std::vector<ResultRow> rows = read_pair_rows(dir, pair, part);
  std::erase_if(rows, [&](const ResultRow& old) { return old.model_id == row.model_id; });
  rows.push_back(row);
  const std::string path = pair_path(dir, pair, part);
  fs::create_directories(fs::path(path).parent_path());
  write_dataset(path, rows);
  if (part.empty()) write_card(dir);  // parts join the card when merged
}

std::vector<MergedPair> merge_parts(const std::string& dir) {
  std::vector<MergedPair> merged;
  if (!fs::is_directory(dir)) return merged;
  const DirLock lock(dir);
  std::vector<fs::path> folders;
  for (const fs::directory_entry& item : fs::directory_iterator(dir)) {
    const std::string name = item.path().filename().string();
    if (item.is_directory() && name.find("__") != std::string::npos && !name.starts_with(".")) folders.push_back(item);
  }
  std::sort(folders.begin(), folders.end());
  for (const fs::path& folder : folders) {
    const std::string stem = folder.filename().string();
    const VersionPair pair{stem.substr(0, stem.find("__")), stem.substr(stem.find("__") + 2)};
    std::vector<fs::path> parts;
    for (const fs::directory_entry& item : fs::directory_iterator(folder))
      if (item.is_regular_file() && item.path().extension() == ".parquet") parts.push_back(item);
    if (parts.empty()) continue;
    std::sort(parts.begin(), parts.end());
    std::map<std::string, ResultRow> newest;  // by model
    const auto keep = [&](ResultRow row) {
      auto [it, added] = newest.try_emplace(row.model_id, row);
      if (!added && it->second.timestamp <= row.timestamp) it->second = std::move(row);
    };
    for (ResultRow& row : read_pair_rows(dir, pair)) keep(std::move(row));
    for (const fs::path& part : parts)
      for (ResultRow& row : read_dataset(part.string())) keep(std::move(row));
    std::vector<ResultRow> rows;
    for (auto& [model, row] : newest) rows.push_back(std::move(row));
    write_dataset(pair_path(dir, pair, ""), rows);
    for (const fs::path& part : parts) fs::remove(part);
    std::error_code not_empty;
    fs::remove(folder, not_empty);  // kept when something else lies in it
    merged.push_back({pair, static_cast<int64_t>(parts.size()), static_cast<int64_t>(rows.size())});
  }
  if (!merged.empty()) write_card(dir);
  return merged;
}

}  // namespace canrun
