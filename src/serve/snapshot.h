// What `canrun serve` answers from: the dataset folder's rows, one set per version pair, and
// the catalog, loaded together into an immutable snapshot. A store reloads the files that
// changed and swaps the snapshot in whole, so a request never sees a half-loaded state.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "lab/catalog.h"
#include "lab/planner.h"
#include "lab/dataset.h"
#include "lab/results_dir.h"

namespace canrun {

// The rows of one (compiler, library) pair: its file and the sweep shards' parts combined.
struct PairRows {
  VersionPair pair;
  std::string file_name;  // "<compiler>__<library>.parquet"
  std::vector<ResultRow> rows;
  Timestamp newest{};  // latest row timestamp: "newest pair" means the one with the latest row
  // model_id -> index in rows of its generation (inference) check, one per model
  std::unordered_map<std::string, size_t> by_model;
  std::vector<size_t> by_id;     // indices of those rows in model_id order
  std::vector<size_t> training;  // indices of the training checks' rows (workload train), in model_id order
  std::set<std::string> yours;  // models whose row came from the user's results folder

  const ResultRow* row_of(const std::string& model_id) const;
};

struct DatasetSnapshot {
  std::vector<PairRows> pairs;  // newest first
  std::vector<CatalogEntry> catalog;
  // Each catalog model's core plan on kCatalogPlanProfile, parallel to `catalog`: shown for the
  // models not checked yet. None where the planner could not read the config.
  std::vector<std::optional<CorePlan>> catalog_plans;
  std::string loaded_at;  // ISO 8601 UTC
  uint64_t generation = 0;  // 1 for the first load, one more for each reload that changed something
  // Files or catalog that could not be read at the last reload; the snapshot keeps their last
  // good contents (or lacks them). Empty when everything loaded.
  std::vector<std::string> errors;

  const CatalogEntry* catalog_entry(const std::string& model_id) const;
  const CorePlan* catalog_plan(const std::string& model_id) const;
  // The pair matching both parts (an empty part matches any), newest first; null when none.
  const PairRows* find_pair(const std::string& compiler, const std::string& library) const;

 private:
  friend class SnapshotStore;
  std::map<std::string, size_t> catalog_index_;
};

// Loads and reloads dataset folders (a pair's rows combined over them, the newest row of a model
// winning) and a catalog file. Thread-safe.
class SnapshotStore {
 public:
  SnapshotStore(std::vector<DatasetFolder> folders, std::string catalog_path);

  // The current snapshot; cheap, and stays valid for as long as the caller holds it.
  std::shared_ptr<const DatasetSnapshot> current() const;

  // Rereads whatever changed (file added, removed, or with a new size or mtime) and swaps in a
  // new snapshot; returns whether it did. A file that fails to read keeps its last good rows
  // and is reported in `errors`; nothing here throws for a bad file.
  bool refresh();

  const std::vector<DatasetFolder>& folders() const { return folders_; }

 private:
  struct FileState {
    std::filesystem::file_time_type mtime;
    uintmax_t size = 0;
    bool operator==(const FileState&) const = default;
  };
  // `error` says when the file is gone.
  static FileState file_state(const std::string& path, std::error_code& error);
  // The pair's file and parts, each with its state: a part added, merged or rewritten changes it.
  using PairState = std::vector<std::pair<std::string, FileState>>;
  struct CachedPair {
    PairState state;
    std::optional<PairRows> rows;  // the last good contents; none if it never read well
    std::string error;             // the read error of the current state, if it failed
  };

  std::vector<DatasetFolder> folders_;
  std::string catalog_path_;
  std::mutex refresh_mutex_;  // one reload at a time
  std::map<std::string, CachedPair> pairs_;  // by the pair's file name
  FileState catalog_state_{};
  std::vector<CatalogEntry> catalog_;
  std::vector<std::optional<CorePlan>> catalog_plans_;  // made when the catalog loads
  std::string catalog_error_;
  bool loaded_ = false;
  uint64_t generation_ = 0;

  mutable std::mutex current_mutex_;  // guards only the pointer swap
  std::shared_ptr<const DatasetSnapshot> current_;
};

}  // namespace canrun
