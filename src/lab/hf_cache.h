// Finding a Hub model in the standard Hugging Face cache layout, as huggingface_hub writes it:
//   <hub cache>/models--ORG--NAME/refs/main      (a commit hash)
//   <hub cache>/models--ORG--NAME/snapshots/<commit>/config.json, *.safetensors, ...
#pragma once

#include <optional>
#include <string>

namespace canrun {

// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (huggingface_hub's order).
std::string hf_hub_cache_dir();

struct CachedSnapshot {
  std::string dir;       // the snapshot folder
  std::string revision;  // the commit refs/main names
};

// The snapshot refs/main points at, when `model_id` ("org/name") is in `cache_dir` with a
// config.json; nullopt when it is absent. A refs/main naming a missing snapshot is an error
// naming both paths.
std::optional<CachedSnapshot> find_cached_snapshot(const std::string& cache_dir, const std::string& model_id);

}  // namespace canrun
