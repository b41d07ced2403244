#include "hub/hf_cache.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

bool is_commit_hash(const std::string& text) {
  return text.size() == 40 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string hf_env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string hf_hub_cache_dir() {
  if (const std::string hub = hf_env("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (const std::string home = hf_env("HF_HOME"); !home.empty()) return home + "/hub";
  return hf_env("HOME") + "/.cache/huggingface/hub";
}

std::string hf_repo_folder_name(const std::string& repo_id) {
  std::string name = "models--" + repo_id;
  for (size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at)) name.replace(at, 1, "--");
  return name;
}

std::optional<CachedSnapshot> find_snapshot(const std::string& cache_dir, const std::string& repo_id,
                                            const std::string& revision) {
  const fs::path repo = fs::path(cache_dir) / hf_repo_folder_name(repo_id);
  const fs::path ref = repo / "refs" / revision;
  std::string commit;
  if (fs::is_regular_file(ref)) {
    std::ifstream in(ref);
    std::getline(in, commit);
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
    // A commit hash, never a path: it is joined to snapshots/ below.
    if (!is_commit_hash(commit))
      fail(ErrorKind::kIo, ref.string() + ": holds '" + commit.substr(0, 80) + "', expected a commit hash (40 hex digits)");
    if (!fs::is_directory(repo / "snapshots" / commit))
      fail(ErrorKind::kIo, ref.string() + " names revision " + commit + " but " +
                               (repo / "snapshots" / commit).string() + " is missing");
  } else if (is_commit_hash(revision)) {
    commit = revision;
  } else {
    return std::nullopt;
  }
  const fs::path snapshot = repo / "snapshots" / commit;
  if (!fs::is_directory(snapshot)) return std::nullopt;
  return CachedSnapshot{snapshot.string(), commit};
}

std::optional<CachedSnapshot> find_cached_snapshot(const std::string& cache_dir, const std::string& model_id) {
  std::optional<CachedSnapshot> snapshot = find_snapshot(cache_dir, model_id, "main");
  if (!snapshot || !fs::exists(fs::path(snapshot->dir) / "config.json")) return std::nullopt;
  return snapshot;
}

}  // namespace canrun
