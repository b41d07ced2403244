#include "plan/plan_transfer.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "plan/plan_manifest.h"
#include "util/atomic_file.h"
#include "plan/plan_remote.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

struct IndexEntry {
  PlanKey key;
  Json manifest;
};

// "<version>/index.json" parsed and checked: each entry's digest is its key's, of this version.
std::map<std::string, IndexEntry> parse_index(const std::string& text, const std::string& where,
                                              const std::string& version) {
  Json index = parse_json(text, where, ErrorKind::kIo);
  if (string_or(index, "compiler_version", "") != version)
    fail(ErrorKind::kIo, where + ": not a plan index of compiler version " + version);
  if (!index.contains("entries") || !index["entries"].is_array())
    fail(ErrorKind::kIo, where + ": \"entries\" is missing or not an array");
  std::map<std::string, IndexEntry> entries;
  for (const Json& item : index["entries"]) {
    const std::string digest = string_or(item, "digest", "");
    const std::string entry_where = where + ": entry " + digest;
    if (!is_plan_digest(digest)) fail(ErrorKind::kIo, where + ": an entry's \"digest\" is not 32 hex characters");
    if (!item.contains("manifest")) fail(ErrorKind::kIo, entry_where + ": no \"manifest\"");
    const PlanKey key = manifest_key(item["manifest"], entry_where);
    if (key.digest() != digest || key.compiler_version != version)
      fail(ErrorKind::kIo, entry_where + ": its manifest is of another key or compiler version");
    manifest_files(item["manifest"], entry_where);
    entries[digest] = {key, item["manifest"]};
  }
  return entries;
}

std::string index_text(const std::string& version, const std::map<std::string, IndexEntry>& entries) {
  Json list = Json::array();
  for (const auto& [digest, entry] : entries) list.push_back({{"digest", digest}, {"manifest", entry.manifest}});
  return Json({{"compiler_version", version}, {"entries", list}}).dump(2) + "\n";
}

// One line on stderr at most every second ("pull: 120.0 of 300.0 MiB, entry 3 of 10"),
// rewritten in place on a terminal.
class Progress {
 public:
  Progress(const char* verb, bool enabled, int entries, uint64_t total)
      : verb_(verb), enabled_(enabled), entries_(entries), total_(total), last_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (printed_ && terminal_) std::fputc('\n', stderr);
  }

  ByteProgress file(int entry) {
    const uint64_t start = done_;
    return [this, entry, start](uint64_t bytes) { update(entry, start + bytes); };
  }
  void finish_file(uint64_t bytes) { done_ += bytes; }

 private:
  void update(int entry, uint64_t done) {
    const auto now = std::chrono::steady_clock::now();
    if (!enabled_ || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    printed_ = true;
    std::fprintf(stderr, "%s%s: %.1f of %.1f MiB, entry %d of %d%s", terminal_ ? "\r" : "", verb_,
                 static_cast<double>(done) / (1 << 20), static_cast<double>(total_) / (1 << 20), entry, entries_,
                 terminal_ ? "" : "\n");
  }

  const char* verb_;
  bool enabled_;
  bool terminal_ = ::isatty(2) != 0;
  bool printed_ = false;
  int entries_;
  uint64_t total_;
  uint64_t done_ = 0;
  std::chrono::steady_clock::time_point last_;
};

// The remote's files of an entry: the manifest's, then manifest.json itself.
std::vector<std::string> entry_files(const Json& manifest, const std::string& where) {
  std::vector<std::string> names = manifest_files(manifest, where);
  names.push_back(kManifestName);
  return names;
}

}  // namespace

TransferReport pull_plans(const PlanCache& cache, const std::string& source, const TransferOptions& options) {
  const std::unique_ptr<PlanRemote> remote = open_plan_remote(source, options.headers);
  const std::string version = cache.compiler_version();
  const std::string index_path = version + "/index.json";
  const std::optional<std::string> text = remote->read(index_path);
  if (!text)
    fail(ErrorKind::kIo, remote->where(index_path) + ": not found (no plans of compiler version " + version +
                             " were pushed there)");
  TransferReport report;
  std::map<std::string, IndexEntry> missing;
  uint64_t total = 0;
  for (auto& [digest, entry] : parse_index(*text, remote->where(index_path), version)) {
    if (cache.find(entry.key)) {
      ++report.present;
      continue;
    }
    total += manifest_bytes(entry.manifest);
    missing.emplace(digest, std::move(entry));
  }

  // Every entry is downloaded and verified before any is installed.
  std::vector<std::pair<const IndexEntry*, fs::path>> staged;
  const auto discard_staged = [&staged] {
    std::error_code ignored;
    for (const auto& [entry, temp] : staged) fs::remove_all(temp, ignored);
  };
  Progress progress("pull", options.progress, static_cast<int>(missing.size()), total);
  try {
    for (const auto& [digest, entry] : missing) {
      staged.emplace_back(&entry, cache.make_temp_dir(digest));
      const fs::path& temp = staged.back().second;
      const std::string prefix = version + "/" + digest + "/";
      for (const std::string& name : entry_files(entry.manifest, remote->where(index_path))) {
        remote->download(prefix + name, temp / name, progress.file(static_cast<int>(staged.size())));
        std::error_code ignored;
        progress.finish_file(fs::file_size(temp / name, ignored));
      }
      if (read_json_file((temp / kManifestName).string(), ErrorKind::kIo) != entry.manifest)
        fail(ErrorKind::kIo, remote->where(prefix + kManifestName) + ": differs from the entry in " +
                                 remote->where(index_path));
      const std::string problem = check_files(temp, entry.manifest, true);
      if (!problem.empty()) fail(ErrorKind::kIo, remote->where(prefix) + problem);
    }
  } catch (const Error& e) {
    discard_staged();
    fail(e.kind(), std::string(e.what()) + "; nothing was installed");
  } catch (...) {
    discard_staged();
    throw;
  }
  for (const auto& [entry, temp] : staged) {
    write_file_atomically((temp / kPulledFromName).string(), remote->where("") + "\n");
    if (cache.install(entry->key, temp)) {
      ++report.copied;
      report.bytes += manifest_bytes(entry->manifest);
    } else {
      ++report.present;
    }
  }
  return report;
}

TransferReport push_plans(const PlanCache& cache, const std::string& destination, const TransferOptions& options) {
  const std::unique_ptr<PlanRemote> remote = open_plan_remote(destination, options.headers);
  const std::string version = cache.compiler_version();
  const std::string index_path = version + "/index.json";
  const std::optional<std::string> text = remote->read(index_path);
  std::map<std::string, IndexEntry> index;
  if (text) index = parse_index(*text, remote->where(index_path), version);

  TransferReport report;
  std::vector<PlanEntryInfo> missing;
  uint64_t total = 0;
  for (PlanEntryInfo& info : cache.list(false, true)) {
    if (!info.problem.empty()) {
      std::cerr << "warning: not pushing plan cache entry " << info.dir.string() << ": " << info.problem << "\n";
    } else if (index.count(info.digest)) {
      ++report.present;
    } else {
      total += manifest_bytes(info.manifest);
      missing.push_back(std::move(info));
    }
  }
  Progress progress("push", options.progress, static_cast<int>(missing.size()), total);
  for (const PlanEntryInfo& info : missing) {
    const std::string prefix = version + "/" + info.digest + "/";
    // manifest.json comes last: a remote entry with its manifest is complete.
    for (const std::string& name : entry_files(info.manifest, (info.dir / kManifestName).string())) {
      remote->upload(info.dir / name, prefix + name, progress.file(report.copied + 1));
      std::error_code ignored;
      progress.finish_file(fs::file_size(info.dir / name, ignored));
    }
    index[info.digest] = {manifest_key(info.manifest, info.dir.string()), info.manifest};
    ++report.copied;
    report.bytes += manifest_bytes(info.manifest);
  }
  if (report.copied == 0 && text) return report;
  // Entries another push added while these uploaded are kept (a push racing this very write
  // can still lose its own; pushing again restores them).
  if (const std::optional<std::string> latest = remote->read(index_path))
    index.merge(parse_index(*latest, remote->where(index_path), version));
  remote->write(index_path, index_text(version, index));
  return report;
}

}  // namespace canrun
