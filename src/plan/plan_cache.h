// The on-disk plan cache: compiled plans (packed weights, graph and buffer plans) stored under
// <root>/<compiler_version>/<digest>/ so a later run skips compilation. Entries are written
// atomically (built in a temporary folder, then renamed), built once across processes (a flock
// per key), and verified on every lookup against their manifest; a corrupt or foreign entry is
// reported on stderr and rebuilt, never used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan_key.h"
#include "util/json.h"
#include "util/version.h"

namespace canrun {

struct PlanEntry {
  std::filesystem::path dir;  // the entry's folder: manifest.json + its files
  PlanKey key;
  Json manifest;
  std::filesystem::path file(std::string_view name) const { return dir / name; }
};

// Optional human label shown by `cache ls` (e.g. the model folder name); NOT part of the key.
struct PlanCacheOptions {
  std::string label;
};

// One entry folder as `cache ls` and `cache prune` see it.
struct PlanEntryInfo {
  std::filesystem::path dir;
  std::string compiler_version;  // the folder it lies in
  std::string digest;            // its folder name
  Json manifest;                 // null when unreadable
  std::string problem;           // what is wrong with it; empty when it checked out
  uint64_t bytes = 0;            // on disk, manifest included
  int64_t last_used = 0;         // Unix seconds of the last hit (or of its creation)
};

struct PruneOptions {
  std::optional<double> older_than_days;  // remove entries unused for longer
  std::optional<uint64_t> max_bytes;       // then remove the least recently used until under
  bool dry_run = false;
};

struct PrunedItem {
  std::filesystem::path path;
  std::string reason;
  uint64_t bytes = 0;
};

struct PruneReport {
  std::vector<PrunedItem> removed;  // or, for a dry run, what would be
  uint64_t bytes_freed = 0;
};

class PlanCache {
 public:
  // `compiler_version` is the version whose entries count as current (tests pass others).
  explicit PlanCache(std::filesystem::path root, std::string compiler_version = kVersion);

  // $CANRUN_CACHE_DIR, else $XDG_CACHE_HOME/canrun/plans, else ~/.cache/canrun/plans.
  static std::filesystem::path default_root();
  const std::filesystem::path& root() const { return root_; }
  const std::string& compiler_version() const { return compiler_version_; }
  std::filesystem::path entry_dir(const PlanKey& key) const;

  // A verified entry of the current compiler version, or nullopt (absent, foreign version,
  // corrupt: warned on stderr).
  std::optional<PlanEntry> find(const PlanKey& key) const;

  // Returns the verified entry for key. When absent/corrupt: takes the key's lock, checks again
  // (another process may have stored it meanwhile), else calls build(temp_dir), which writes
  // plain files into temp_dir; the cache then writes manifest.json (key, label, files with
  // bytes + xxh3, created time), renames temp_dir into place atomically, and returns it.
  // *built says whether build ran. If build throws, the temp folder is removed and the exception
  // propagates; nothing is stored.
  PlanEntry get_or_build(const PlanKey& key, const std::function<void(const std::filesystem::path&)>& build,
                         bool* built = nullptr, const PlanCacheOptions& options = {});

  // A new empty folder beside the entry for `digest`, on the same file system so it can be
  // renamed into place; `cache prune` removes it when abandoned.
  std::filesystem::path make_temp_dir(const std::string& digest) const;

  // Installs `staged` (the entry's files and its manifest.json, already verified) as the entry
  // for key unless a verified one exists; `staged` is gone afterwards. Returns whether it did.
  bool install(const PlanKey& key, const std::filesystem::path& staged) const;

  // The entries of the current version (of every version when `all_versions`), most recently
  // used first; each checked by file sizes, and by checksums too when `checksums`.
  std::vector<PlanEntryInfo> list(bool all_versions, bool checksums) const;

  // Removes an entry folder (renamed away first, so it vanishes at once); returns its bytes.
  uint64_t remove(const PlanEntryInfo& entry) const;

  // Removes entries of other compiler versions, corrupt entries and abandoned temporary
  // folders, then entries by last use as `options` say.
  PruneReport prune(const PruneOptions& options) const;

 private:
  std::optional<PlanEntry> lookup(const PlanKey& key, bool warn) const;
  // install() with the key's lock already held.
  bool place(const PlanKey& key, const std::filesystem::path& staged) const;

  std::filesystem::path root_;
  std::string compiler_version_;
};

}  // namespace canrun
