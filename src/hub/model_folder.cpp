#include "hub/model_folder.h"

#include <filesystem>

#include "hub/download_progress.h"
#include "hub/hf_cache.h"
#include "hub/hub_download.h"

namespace canrun {

std::string resolve_model_folder(const std::string& argument) {
  if (std::filesystem::exists(argument)) return argument;
  const std::optional<HubRef> ref = try_parse_hub_ref(argument);
  if (!ref) return argument;
  const HubSettings settings = hub_settings_from_environment();
  if (const auto cached = find_snapshot(settings.cache_dir, ref->repo_id, ref->revision)) return cached->dir;
  PullOptions options;
  options.ref = *ref;
  return pull_with_progress(options, settings).snapshot_dir;
}

}  // namespace canrun
