#include "lab/hf_cache.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace canrun {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string hf_hub_cache_dir() {
  if (const std::string hub = env("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (const std::string home = env("HF_HOME"); !home.empty()) return home + "/hub";
  return env("HOME") + "/.cache/huggingface/hub";
}

std::optional<CachedSnapshot> find_cached_snapshot(const std::string& cache_dir, const std::string& model_id) {
  namespace fs = std::filesystem;
  std::string folder_name = "models--" + model_id;
  for (size_t at = folder_name.find('/'); at != std::string::npos; at = folder_name.find('/', at))
    folder_name.replace(at, 1, "--");
  const fs::path repo = fs::path(cache_dir) / folder_name;
  const fs::path ref = repo / "refs" / "main";
  if (!fs::is_regular_file(ref)) return std::nullopt;
  std::ifstream in(ref);
  std::string revision;
  std::getline(in, revision);
  while (!revision.empty() && std::isspace(static_cast<unsigned char>(revision.back()))) revision.pop_back();
  if (revision.empty()) fail(ErrorKind::kIo, ref.string() + ": empty, expected a commit hash");
  const fs::path snapshot = repo / "snapshots" / revision;
  if (!fs::is_directory(snapshot))
    fail(ErrorKind::kIo, ref.string() + " names revision " + revision + " but " + snapshot.string() + " is missing");
  if (!fs::exists(snapshot / "config.json")) return std::nullopt;  // a partial download (e.g. only a README)
  return CachedSnapshot{snapshot.string(), revision};
}

}  // namespace canrun
