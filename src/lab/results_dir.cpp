#include "lab/results_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "util/atomic_file.h"
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

constexpr std::string_view kParquet = ".parquet";

// The pair's file in `dir`, or its part `part`.
std::string pair_path(const std::string& dir, const VersionPair& pair, const std::string& part) {
  const std::string file = dataset_file_name(pair);
  if (part.empty()) return (fs::path(dir) / file).string();
  return (fs::path(dir) / file.substr(0, file.size() - kParquet.size()) / (part + ".parquet")).string();
}

std::vector<ResultRow> read_if_present(const std::string& path) {
  return fs::exists(path) ? read_dataset(path) : std::vector<ResultRow>{};
}

// The dataset card, for the pairs in `dir`.
void write_card(const std::string& dir) {
  std::vector<CardConfig> configs;
  for (const DatasetFile& file : list_dataset_files(dir)) {
    const std::string name = fs::path(file.path).stem().string();
    CardConfig& config = configs.emplace_back(CardConfig{name, {}, ""});
    if (fs::exists(file.path)) config.data_files.push_back(name + ".parquet");
    if (!file.parts.empty()) config.data_files.push_back(name + "/*.parquet");
    // Another writer's file that cannot be read now (a shard's part mid-copy) costs its summary,
    // not this write.
    try {
      config.where_run = run_summary(read_pair(file));
    } catch (const Error& e) {
      config.where_run = std::string("not summarised: ") + e.what();
    }
  }
  write_file_atomically((fs::path(dir) / "README.md").string(), dataset_card(configs));
}

}  // namespace

DatasetFile find_dataset_pair(const std::string& dir, const VersionPair& pair) {
  DatasetFile file{pair, pair_path(dir, pair, ""), {}};
  const fs::path folder = fs::path(file.path).replace_extension();
  std::error_code missing;
  for (const fs::directory_entry& item : fs::directory_iterator(folder, missing))
    if (item.is_regular_file() && item.path().extension() == kParquet && !item.path().filename().string().starts_with("."))
      file.parts.push_back(item.path().string());
  std::sort(file.parts.begin(), file.parts.end());
  return file;
}

std::vector<DatasetFile> list_dataset_files(const std::string& dir) {
  std::set<std::string> stems;  // sorted, each pair once
  if (!fs::is_directory(dir)) return {};
  for (const fs::directory_entry& item : fs::directory_iterator(dir)) {
    std::string name = item.path().filename().string();
    if (name.starts_with(".") || name.find("__") == std::string::npos) continue;  // not one of ours
    if (item.is_regular_file() && name.ends_with(kParquet)) stems.insert(name.substr(0, name.size() - kParquet.size()));
    if (item.is_directory()) stems.insert(name);
  }
  std::vector<DatasetFile> files;
  for (const std::string& stem : stems) {
    const size_t separator = stem.find("__");
    DatasetFile file = find_dataset_pair(dir, {stem.substr(0, separator), stem.substr(separator + 2)});
    if (fs::exists(file.path) || !file.parts.empty()) files.push_back(std::move(file));
  }
  return files;
}

std::string shipped_dataset_dir() {
  if (const char* dir = std::getenv("CANRUN_DATASET"); dir && *dir) return dir;
  return CANRUN_DATASET_DIR;
}

std::string user_results_dir() {
  if (const char* dir = std::getenv("CANRUN_RESULTS"); dir && *dir) return dir;
  return "results";
}

std::vector<DatasetFolder> dataset_folders(const std::string& data) {
  if (!data.empty()) return {{data, false}};
  std::vector<DatasetFolder> folders = {{shipped_dataset_dir(), false}};
  std::error_code unknown;
  const std::string results = user_results_dir();
  if (!fs::equivalent(results, folders.front().dir, unknown)) folders.push_back({results, true});
  return folders;
}

std::string folders_text(const std::vector<DatasetFolder>& folders) {
  std::string text;
  for (size_t i = 0; i < folders.size(); ++i)
    text += (i == 0 ? "" : i + 1 == folders.size() ? " and " : ", ") + folders[i].dir;
  return text;
}

std::string PairFiles::file_name() const { return dataset_file_name(pair); }

std::vector<std::string> PairFiles::paths() const {
  std::vector<std::string> paths;
  for (const DatasetFile& file : files) {
    std::error_code unreadable;
    if (fs::exists(file.path, unreadable)) paths.push_back(file.path);
    paths.insert(paths.end(), file.parts.begin(), file.parts.end());
  }
  return paths;
}

std::string PairFiles::where() const {
  std::string text;
  for (const DatasetFile& file : files) {
    text += (text.empty() ? "" : " and ") + file.path;
    if (!file.parts.empty()) text += " (with " + std::to_string(file.parts.size()) + " sweep parts not merged yet)";
  }
  return text;
}

std::vector<PairFiles> list_pairs(const std::vector<DatasetFolder>& folders) {
  std::map<std::string, PairFiles> pairs;  // by file name: sorted
  for (const DatasetFolder& folder : folders)
    for (DatasetFile& file : list_dataset_files(folder.dir)) {
      PairFiles& pair = pairs.try_emplace(dataset_file_name(file.pair), PairFiles{file.pair, {}, {}}).first->second;
      pair.files.push_back(std::move(file));
      pair.yours.push_back(folder.yours);
    }
  std::vector<PairFiles> listed;
  for (auto& [name, pair] : pairs) listed.push_back(std::move(pair));
  return listed;
}

std::vector<ResultRow> read_pair(const PairFiles& files, std::set<std::string>* yours) {
  // By model and workload setup: the row, and whether it is yours.
  std::map<std::pair<std::string, std::string>, std::pair<ResultRow, bool>> newest;
  for (size_t i = 0; i < files.files.size(); ++i)
    for (ResultRow& row : read_pair(files.files[i])) {
      auto [it, added] = newest.try_emplace({row.model_id, workload_setup(row)}, row, files.yours[i]);
      if (!added && it->second.first.timestamp <= row.timestamp) it->second = {std::move(row), files.yours[i]};
    }
  std::vector<ResultRow> rows;
  for (auto& [key, kept] : newest) {
    if (yours && kept.second) yours->insert(key.first);
    rows.push_back(std::move(kept.first));
  }
  return rows;
}

std::vector<ResultRow> read_pair(const DatasetFile& file) {
  std::map<std::pair<std::string, std::string>, ResultRow> newest;  // by model and workload setup
  const auto keep = [&](ResultRow row) {
    auto [it, added] = newest.try_emplace({row.model_id, workload_setup(row)}, row);
    if (!added && it->second.timestamp <= row.timestamp) it->second = std::move(row);
  };
  for (ResultRow& row : read_if_present(file.path)) keep(std::move(row));
  for (const std::string& part : file.parts)
    for (ResultRow& row : read_dataset(part)) keep(std::move(row));
  std::vector<ResultRow> rows;
  for (auto& [key, row] : newest) rows.push_back(std::move(row));
  return rows;
}

void record_row(const std::string& dir, const ResultRow& row, const std::string& part) {
  fs::create_directories(dir);
  const DirLock lock(dir);
  const VersionPair pair{row.compiler_version, row.library_version};
  const std::string path = pair_path(dir, pair, part);
  std::vector<ResultRow> rows = read_if_present(path);
  std::erase_if(rows, [&](const ResultRow& old) {
    return old.model_id == row.model_id && workload_setup(old) == workload_setup(row);
  });
  rows.push_back(row);
  fs::create_directories(fs::path(path).parent_path());
  write_dataset(path, rows);
  write_card(dir);
}

std::vector<MergedPair> merge_parts(const std::string& dir) {
  std::vector<MergedPair> merged;
  if (!fs::is_directory(dir)) return merged;
  const DirLock lock(dir);
  for (const DatasetFile& file : list_dataset_files(dir)) {
    if (file.parts.empty()) continue;
    const std::vector<ResultRow> rows = read_pair(file);
    write_dataset(file.path, rows);
    for (const std::string& part : file.parts) fs::remove(part);
    std::error_code not_empty;
    fs::remove(fs::path(file.path).replace_extension(), not_empty);  // kept when something else lies in it
    merged.push_back({file.pair, static_cast<int64_t>(file.parts.size()), static_cast<int64_t>(rows.size())});
  }
  if (!merged.empty()) write_card(dir);
  return merged;
}

std::vector<RemovedRows> remove_models(const std::string& dir, const std::set<std::string>& models) {
  std::vector<RemovedRows> removed;
  if (!fs::is_directory(dir)) return removed;
  const DirLock lock(dir);
  const std::vector<DatasetFile> files = list_dataset_files(dir);
  for (const DatasetFile& file : files)
    if (!file.parts.empty())
      fail(ErrorKind::kUsage, file.parts.front() + ": the pair has parts a sharded sweep wrote; run `canrun dataset merge " +
                                  dir + "` first");
  for (const DatasetFile& file : files) {
    std::vector<ResultRow> rows = read_if_present(file.path);
    RemovedRows pair{file.pair, {}, 0};
    std::erase_if(rows, [&](const ResultRow& row) {
      if (!models.contains(row.model_id)) return false;
      pair.models.push_back(row.model_id);
      return true;
    });
    if (pair.models.empty()) continue;
    write_dataset(file.path, rows);
    std::sort(pair.models.begin(), pair.models.end());
    pair.rows_left = static_cast<int64_t>(rows.size());
    removed.push_back(std::move(pair));
  }
  if (!removed.empty()) write_card(dir);
  return removed;
}

}  // namespace canrun
