#include "lab/model_source.h"

#include <algorithm>
#include <filesystem>

#include "lab/hf_cache.h"
#include "lab/synthetic_weights.h"

namespace canrun {

ModelSource resolve_model(const std::string& model, bool force_synthetic, const std::vector<CatalogEntry>& catalog) {
  namespace fs = std::filesystem;
  ModelSource source;
  source.model_id = model;
  const auto found = std::find_if(catalog.begin(), catalog.end(), [&](const CatalogEntry& e) { return e.id == model; });
  if (found != catalog.end()) source.entry = *found;

  if (fs::is_directory(model) && !force_synthetic) {
    source.kind = "local folder";
    source.dir = model;
  } else if (const auto cached = force_synthetic ? std::nullopt : find_cached_snapshot(hf_hub_cache_dir(), model)) {
    source.kind = "hugging face cache";
    source.dir = cached->dir;
    source.revision = cached->revision;
  } else if (source.entry) {
    source.kind = "synthetic";
    source.synthetic_config = hf_config(*source.entry);
    std::string folder = model;
    std::replace(folder.begin(), folder.end(), '/', '-');
    source.dir = synthetic_cache_dir() + "/" + folder;
  } else {
    fail(ErrorKind::kUsage, "MODEL '" + model + "': " +
                                (force_synthetic ? std::string("--synthetic needs a catalog id")
                                                 : "not a folder, not in the Hugging Face cache at " +
                                                       hf_hub_cache_dir() + ", and not a catalog id"));
  }
  return source;
}

}  // namespace canrun
