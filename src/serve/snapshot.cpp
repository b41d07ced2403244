#include "serve/snapshot.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <system_error>

#include "lab/catalog_plan.h"
#include "lab/results_dir.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

std::string now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

const ResultRow* PairRows::row_of(const std::string& model_id) const {
  const auto found = by_model.find(model_id);
  return found == by_model.end() ? nullptr : &rows[found->second];
}

const CatalogEntry* DatasetSnapshot::catalog_entry(const std::string& model_id) const {
  const auto found = catalog_index_.find(model_id);
  return found == catalog_index_.end() ? nullptr : &catalog[found->second];
}

const CorePlan* DatasetSnapshot::catalog_plan(const std::string& model_id) const {
  const auto found = catalog_index_.find(model_id);
  if (found == catalog_index_.end() || !catalog_plans[found->second]) return nullptr;
  return &*catalog_plans[found->second];
}

const PairRows* DatasetSnapshot::find_pair(const std::string& compiler, const std::string& library) const {
  for (const PairRows& pair : pairs)
    if ((compiler.empty() || pair.pair.compiler == compiler) && (library.empty() || pair.pair.library == library))
      return &pair;
  return nullptr;
}

SnapshotStore::SnapshotStore(std::vector<DatasetFolder> folders, std::string catalog_path)
    : folders_(std::move(folders)), catalog_path_(std::move(catalog_path)) {
  refresh();
  // Without a catalog there are no views to serve; a bad dataset file only costs its rows.
  if (!catalog_error_.empty()) fail(ErrorKind::kUsage, catalog_error_);
}

std::shared_ptr<const DatasetSnapshot> SnapshotStore::current() const {
  const std::lock_guard lock(current_mutex_);
  return current_;
}

SnapshotStore::FileState SnapshotStore::file_state(const std::string& path, std::error_code& error) {
  FileState state{fs::last_write_time(path, error), 0};
  if (!error) state.size = fs::file_size(path, error);
  return state;
}

bool SnapshotStore::refresh() {
  const std::lock_guard lock(refresh_mutex_);
  bool changed = !loaded_;
  loaded_ = true;

  std::error_code catalog_missing;  // then load_catalog says what is wrong
  const FileState catalog_state = file_state(catalog_path_, catalog_missing);
  if (!(catalog_state == catalog_state_) || catalog_.empty()) {
    catalog_state_ = catalog_state;
    try {
      catalog_ = load_catalog(catalog_path_);
      catalog_error_.clear();
      const DeviceProfile profile = find_profile(builtin_profiles(), kCatalogPlanProfile);
      catalog_plans_.clear();
      for (const CatalogEntry& entry : catalog_) catalog_plans_.push_back(plan_entry(entry, profile).plan);
    } catch (const std::exception& e) {
      catalog_error_ = e.what();  // keep the last good catalog
    }
    changed = true;
  }

  std::vector<PairFiles> files;
  try {
    files = list_pairs(folders_);
  } catch (const std::exception&) {
    // A folder vanished or is unreadable mid-listing: serve what we have, retry next time.
    return false;
  }
  std::map<std::string, CachedPair> next;
  for (const PairFiles& file : files) {
    const std::string key = file.file_name();
    const std::vector<std::string> paths = file.paths();
    PairState state;
    bool gone = false;
    for (const std::string& path : paths) {
      std::error_code missing;
      state.emplace_back(path, file_state(path, missing));
      gone = gone || missing;
    }
    if (gone) continue;  // removed between listing and stat
    auto previous = pairs_.find(key);
    if (previous != pairs_.end() && previous->second.state == state) {
      next.emplace(key, std::move(previous->second));
      continue;
    }
    changed = true;
    CachedPair cached;
    cached.state = state;
    if (previous != pairs_.end()) cached.rows = std::move(previous->second.rows);
    try {
      std::set<std::string> yours;
      std::vector<ResultRow> rows = read_pair(file, &yours);
      Timestamp newest{};
      for (const ResultRow& row : rows) newest = std::max(newest, row.timestamp);
      PairRows& loaded =
          cached.rows.emplace(PairRows{file.pair, key, std::move(rows), newest, {}, {}, {}, std::move(yours)});
      for (size_t i = 0; i < loaded.rows.size(); ++i) {
        if (loaded.rows[i].workload == "train") {
          loaded.training.push_back(i);
          continue;
        }
        loaded.by_model[loaded.rows[i].model_id] = i;
        loaded.by_id.push_back(i);
      }
      const auto by_model_id = [&](size_t a, size_t b) { return loaded.rows[a].model_id < loaded.rows[b].model_id; };
      std::sort(loaded.by_id.begin(), loaded.by_id.end(), by_model_id);
      std::stable_sort(loaded.training.begin(), loaded.training.end(), by_model_id);
    } catch (const std::exception& e) {
      cached.error = e.what();
    }
    next.emplace(key, std::move(cached));
  }
  changed = changed || next.size() != pairs_.size();
  pairs_ = std::move(next);
  if (!changed) return false;

  auto snapshot = std::make_shared<DatasetSnapshot>();
  snapshot->catalog = catalog_;
  snapshot->catalog_plans = catalog_plans_;
  for (size_t i = 0; i < snapshot->catalog.size(); ++i) snapshot->catalog_index_[snapshot->catalog[i].id] = i;
  if (!catalog_error_.empty()) snapshot->errors.push_back(catalog_error_);
  for (const auto& [path, cached] : pairs_) {
    if (!cached.error.empty()) snapshot->errors.push_back(cached.error);
    if (cached.rows) snapshot->pairs.push_back(*cached.rows);
  }
  std::stable_sort(snapshot->pairs.begin(), snapshot->pairs.end(),
                   [](const PairRows& a, const PairRows& b) { return a.newest > b.newest; });
  snapshot->loaded_at = now_iso8601();
  snapshot->generation = ++generation_;
  const std::lock_guard swap(current_mutex_);
  current_ = std::move(snapshot);
  return true;
}

}  // namespace canrun
