#include "lab/model_source.h"

#include <algorithm>
#include <filesystem>

#include "hub/download_progress.h"
#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "hub/model_folder.h"
#include "lab/synthetic_weights.h"
#include "util/json.h"

namespace canrun {

namespace {

// The catalog id a folder's config.json names in _name_or_path (transformers writes the Hub id
// it was loaded from there), or empty.
std::string named_catalog_id(const std::string& folder, const std::vector<CatalogEntry>& catalog) {
  const std::filesystem::path config = std::filesystem::path(folder) / "config.json";
  if (!std::filesystem::is_regular_file(config)) return "";
  try {
    const Json json = read_json_file(config.string(), ErrorKind::kCheckpoint);
    if (!json.contains("_name_or_path") || !json["_name_or_path"].is_string()) return "";
    const std::string name = json["_name_or_path"].get<std::string>();
    const bool listed = std::any_of(catalog.begin(), catalog.end(), [&](const CatalogEntry& e) { return e.id == name; });
    return listed ? name : "";
  } catch (const Error&) {
    return "";  // the check's load reports a bad config.json
  }
}

}  // namespace

ModelSource resolve_model(const std::string& model, WeightsPolicy policy, const std::vector<CatalogEntry>& catalog,
                          const std::string& model_id) {
  namespace fs = std::filesystem;
  const bool force_synthetic = policy == WeightsPolicy::kSynthetic;
  const std::optional<HubRef> ref = try_parse_hub_ref(model);
  ModelSource source;
  source.argument = model;
  source.model_id = ref ? ref->repo_id : model;
  const HubSettings hub = hub_settings_from_environment();
  std::optional<CachedSnapshot> cached;
  if (ref && !force_synthetic && !fs::is_directory(model)) {
    cached = find_snapshot(hub.cache_dir, ref->repo_id, ref->revision);
    if (cached && !fs::exists(fs::path(cached->dir) / "config.json")) cached.reset();  // a partial download
  }
  if (fs::is_directory(model) && !force_synthetic) {
    source.kind = "local folder";
    source.dir = model;
    const std::string named = named_catalog_id(model, catalog);
    if (!named.empty()) source.model_id = named;
  } else if (cached) {
    source.kind = "hugging face cache";
    source.dir = cached->dir;
    source.revision = cached->revision;
  } else if (ref && policy == WeightsPolicy::kReal) {
    try {
      if (const std::optional<std::string> mistyped = mistyped_local_folder(model, *ref)) fail(ErrorKind::kUsage, *mistyped);
      PullOptions pull;
      pull.ref = *ref;
      const PullResult pulled = pull_with_progress(pull, hub);
      source.kind = "hugging face cache";
      source.dir = pulled.snapshot_dir;
      source.revision = pulled.commit;
    } catch (const Error& e) {
      source.kind = "unavailable";
      source.unavailable_reason = e.what();
    }
  } else if (!model_id.empty()) {
    fail(ErrorKind::kUsage, "--model-id names the model a folder or a cached Hub snapshot holds; MODEL '" + model +
                                "' is neither");
  }
  if (!model_id.empty()) source.model_id = model_id;
  const auto found =
      std::find_if(catalog.begin(), catalog.end(), [&](const CatalogEntry& e) { return e.id == source.model_id; });
  if (found != catalog.end()) source.entry = *found;
  if (!source.kind.empty()) return source;
  if (!source.entry)
    fail(ErrorKind::kUsage, "MODEL '" + model + "': " +
                                (force_synthetic ? std::string("--synthetic needs a catalog id")
                                                 : "not a folder, not in the Hugging Face cache at " + hub.cache_dir +
                                                       ", and not a catalog id"));
  source.kind = "synthetic";
  source.synthetic_config = hf_config(*source.entry);
  std::string folder = source.model_id;
  std::replace(folder.begin(), folder.end(), '/', '-');
  source.dir = synthetic_cache_dir() + "/" + folder;
  return source;
}

}  // namespace canrun
