#include "hub/model_folder.h"

#include <filesystem>

#include "hub/download_progress.h"
#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "util/error.h"

namespace canrun {

std::string resolve_model_folder(const std::string& argument) {
  if (std::filesystem::exists(argument)) return argument;
  const std::optional<HubRef> ref = try_parse_hub_ref(argument);
  if (!ref) return argument;
  const HubSettings settings = hub_settings_from_environment();
  if (const auto cached = find_snapshot(settings.cache_dir, ref->repo_id, ref->revision)) return cached->dir;
  // A mistyped local folder must not turn into a download or a Hub error.
  if (const std::optional<std::string> mistyped = mistyped_local_folder(argument, *ref))
    fail(ErrorKind::kUsage, *mistyped);
  PullOptions options;
  options.ref = *ref;
  return pull_with_progress(options, settings).snapshot_dir;
}

std::optional<std::string> mistyped_local_folder(const std::string& argument, const HubRef& ref) {
  const std::string first_part = ref.repo_id.substr(0, ref.repo_id.find('/'));
  if (!std::filesystem::is_directory(first_part)) return std::nullopt;
  return argument + ": no such folder (" + first_part + "/ is a folder here; `canrun pull " + argument +
         "` downloads the Hub model of that name)";
}

}  // namespace canrun
