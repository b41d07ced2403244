#include "plan/plan_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "plan/file_lock.h"
#include "plan/plan_manifest.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

// A temporary folder younger than this may belong to a compilation still running.
constexpr int64_t kTempGraceSeconds = 600;

std::string lock_name(const std::string& digest) { return digest + ".lock"; }

// "<digest>.tmp-<pid>-<n>": unique on this host, and recognisable by prune.
std::string temp_name(const std::string& digest) {
  static std::atomic<uint64_t> counter{0};
  return digest + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

int64_t unix_seconds(fs::file_time_type time) {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::file_clock::to_sys(time).time_since_epoch())
      .count();
}

int64_t modified(const fs::path& path) {
  std::error_code error;
  const fs::file_time_type time = fs::last_write_time(path, error);
  return error ? 0 : unix_seconds(time);
}

// The last-use time is manifest.json's mtime: set at creation, bumped on every hit.
int64_t last_used(const fs::path& dir) {
  const int64_t time = modified(dir / kManifestName);
  return time != 0 ? time : modified(dir);
}

void mark_used(const fs::path& dir) {
  std::error_code ignored;  // a read-only shared cache is still usable
  fs::last_write_time(dir / kManifestName, fs::file_time_type::clock::now(), ignored);
}

uint64_t folder_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error))
    if (it->is_regular_file(error)) total += it->file_size(error);
  return total;
}

void rename_or_fail(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::rename(from, to, error);
  if (error) fail(ErrorKind::kIo, "cannot rename " + from.string() + " to " + to.string() + ": " + error.message());
}

// Renames the folder to a temporary name first, so readers see it whole or not at all, and an
// interrupted removal leaves a folder prune recognises.
uint64_t discard(const fs::path& dir) {
  const uint64_t bytes = folder_bytes(dir);
  const fs::path doomed = dir.parent_path() / temp_name(dir.filename().string());
  rename_or_fail(dir, doomed);
  std::error_code error;
  fs::remove_all(doomed, error);
  if (error) fail(ErrorKind::kIo, "cannot remove " + doomed.string() + ": " + error.message());
  return bytes;
}

PlanEntryInfo inspect(const fs::path& dir, bool checksums) {
  PlanEntryInfo info;
  info.dir = dir;
  info.compiler_version = dir.parent_path().filename().string();
  info.digest = dir.filename().string();
  info.problem = check_entry(dir, nullptr, checksums, info.manifest);
  info.bytes = folder_bytes(dir);
  info.last_used = last_used(dir);
  return info;
}

void create_folder(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) fail(ErrorKind::kIo, dir.string() + ": cannot create plan cache folder: " + error.message());
}

}  // namespace

PlanCache::PlanCache(fs::path root, std::string compiler_version)
    : root_(std::move(root)), compiler_version_(std::move(compiler_version)) {}

fs::path PlanCache::default_root() {
  const char* explicit_dir = std::getenv("CANRUN_CACHE_DIR");
  if (explicit_dir != nullptr && *explicit_dir != '\0') return explicit_dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return fs::path(xdg) / "canrun" / "plans";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return fs::path(home) / ".cache" / "canrun" / "plans";
  fail(ErrorKind::kUsage, "no plan cache folder: set CANRUN_CACHE_DIR, XDG_CACHE_HOME or HOME, or pass --cache-dir");
}

fs::path PlanCache::entry_dir(const PlanKey& key) const { return root_ / key.compiler_version / key.digest(); }

std::optional<PlanEntry> PlanCache::lookup(const PlanKey& key, bool warn) const {
  if (key.compiler_version != compiler_version_) return std::nullopt;
  const fs::path dir = entry_dir(key);
  std::error_code error;
  if (!fs::exists(dir, error)) return std::nullopt;
  Json manifest;
  const std::string problem = check_entry(dir, &key, true, manifest);
  if (!problem.empty()) {
    if (warn) std::cerr << "warning: plan cache entry " << dir.string() << " ignored: " << problem << "\n";
    return std::nullopt;
  }
  mark_used(dir);
  return PlanEntry{dir, key, manifest};
}

std::optional<PlanEntry> PlanCache::find(const PlanKey& key) const { return lookup(key, true); }

fs::path PlanCache::make_temp_dir(const std::string& digest) const {
  const fs::path version_dir = root_ / compiler_version_;
  create_folder(version_dir);
  const fs::path dir = version_dir / temp_name(digest);
  std::error_code error;
  if (!fs::create_directory(dir, error))
    fail(ErrorKind::kIo, dir.string() + ": cannot create temporary folder: " +
                             (error ? error.message() : std::string("it exists")));
  return dir;
}

PlanEntry PlanCache::get_or_build(const PlanKey& key, const std::function<void(const fs::path&)>& build,
                                  bool* built, const PlanCacheOptions& options) {
  if (key.compiler_version != compiler_version_)
    fail(ErrorKind::kUsage, "plan key of compiler version \"" + key.compiler_version +
                                "\" given to the plan cache of version " + compiler_version_);
  if (built != nullptr) *built = false;
  if (auto entry = lookup(key, true)) return *entry;
  const std::string digest = key.digest();
  create_folder(root_ / compiler_version_);
  FileLock lock(root_ / compiler_version_ / lock_name(digest));
  // Another process may have built it while we waited for the lock.
  if (auto entry = lookup(key, false)) return *entry;
  const fs::path temp = make_temp_dir(digest);
  Json manifest;
  try {
    build(temp);
    manifest = write_manifest(temp, key, options.label);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    throw;
  }
  place(key, temp);
  if (built != nullptr) *built = true;
  return PlanEntry{entry_dir(key), key, manifest};
}

bool PlanCache::install(const PlanKey& key, const fs::path& staged) const {
  create_folder(root_ / compiler_version_);
  FileLock lock(root_ / compiler_version_ / lock_name(key.digest()));
  return place(key, staged);
}

bool PlanCache::place(const PlanKey& key, const fs::path& staged) const {
  std::error_code ignored;
  if (lookup(key, false)) {
    fs::remove_all(staged, ignored);
    return false;
  }
  const fs::path dir = entry_dir(key);
  try {
    if (fs::exists(dir, ignored)) discard(dir);  // the corrupt entry find() warned about
    rename_or_fail(staged, dir);
  } catch (...) {
    fs::remove_all(staged, ignored);
    throw;
  }
  sync_path(root_ / compiler_version_);
  return true;
}

std::vector<PlanEntryInfo> PlanCache::list(bool all_versions, bool checksums) const {
  std::vector<PlanEntryInfo> entries;
  std::error_code error;
  if (!fs::is_directory(root_, error)) return entries;
  for (const auto& version_dir : fs::directory_iterator(root_)) {
    const std::string version = version_dir.path().filename().string();
    if (!version_dir.is_directory() || (!all_versions && version != compiler_version_)) continue;
    for (const auto& item : fs::directory_iterator(version_dir.path())) {
      const std::string digest = item.path().filename().string();
      if (!item.is_directory() || !is_plan_digest(digest)) continue;
      entries.push_back(inspect(item.path(), checksums));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const PlanEntryInfo& a, const PlanEntryInfo& b) { return a.last_used > b.last_used; });
  return entries;
}

uint64_t PlanCache::remove(const PlanEntryInfo& entry) const { return discard(entry.dir); }

PruneReport PlanCache::prune(const PruneOptions& options) const {
  PruneReport report;
  const auto take = [&](const fs::path& path, const std::string& reason, uint64_t bytes) {
    if (!options.dry_run) discard(path);
    report.removed.push_back({path, reason, bytes});
    report.bytes_freed += bytes;
  };
  const int64_t now = std::time(nullptr);
  std::vector<PlanEntryInfo> kept;
  std::error_code error;
  if (!fs::is_directory(root_, error)) return report;
  for (const auto& version_dir : fs::directory_iterator(root_)) {
    if (!version_dir.is_directory()) continue;
    const std::string version = version_dir.path().filename().string();
    const bool foreign = version != compiler_version_;
    // Listed first: removing renames folders, which a running directory scan might then meet.
    const std::vector<fs::directory_entry> items(fs::directory_iterator(version_dir.path()), {});
    for (const fs::directory_entry& item : items) {
      const std::string name = item.path().filename().string();
      const std::string digest = name.substr(0, name.find('.'));
      const fs::path lock_path = version_dir.path() / lock_name(digest);
      if (item.is_directory() && name.find(".tmp-") != std::string::npos) {
        if (now - modified(item.path()) < kTempGraceSeconds) continue;
        // A held lock means a compilation of that key is running and may own the folder.
        if (fs::exists(lock_path, error) && !FileLock::try_lock(lock_path).held()) continue;
        take(item.path(), "abandoned temporary folder", folder_bytes(item.path()));
      } else if (item.is_directory() && is_plan_digest(name)) {
        if (foreign) {
          take(item.path(), "compiler version " + version, folder_bytes(item.path()));
          continue;
        }
        PlanEntryInfo info = inspect(item.path(), true);
        if (!info.problem.empty())
          take(item.path(), "corrupt: " + info.problem, info.bytes);
        else
          kept.push_back(std::move(info));
      } else if (!options.dry_run && item.is_regular_file() && name == lock_name(digest) &&
                 (foreign || !fs::exists(version_dir.path() / digest, error))) {
        FileLock lock = FileLock::try_lock(item.path());
        if (lock.held()) lock.remove_file();
      }
    }
    if (foreign && !options.dry_run) fs::remove(version_dir.path(), error);  // only when now empty
  }
  std::sort(kept.begin(), kept.end(),
            [](const PlanEntryInfo& a, const PlanEntryInfo& b) { return a.last_used < b.last_used; });
  uint64_t total = 0;
  for (const PlanEntryInfo& info : kept) total += info.bytes;
  for (const PlanEntryInfo& info : kept) {
    if (options.older_than_days && now - info.last_used > *options.older_than_days * 86400.0) {
      take(info.dir, "unused since " + format_utc(info.last_used), info.bytes);
      total -= info.bytes;
    } else if (options.max_bytes && total > *options.max_bytes) {
      take(info.dir, "least recently used beyond the size limit", info.bytes);
      total -= info.bytes;
    }
  }
  return report;
}

}  // namespace canrun
