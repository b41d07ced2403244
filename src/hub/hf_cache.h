// The standard Hugging Face cache layout, as huggingface_hub reads and writes it:
//   <hub cache>/models--ORG--NAME/refs/<revision>            the commit a branch or tag names
//   <hub cache>/models--ORG--NAME/blobs/<etag>               each file's bytes, once
//   <hub cache>/models--ORG--NAME/snapshots/<commit>/<path>  relative links into blobs/
#pragma once

#include <optional>
#include <string>

namespace canrun {

// The environment variable `name` (HF_HOME, HF_TOKEN, ...) as huggingface_hub reads it; "" when unset.
std::string hf_env(const char* name);

// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (huggingface_hub's order).
std::string hf_hub_cache_dir();

// "models--ORG--NAME": the folder of a model repository in the cache.
std::string hf_repo_folder_name(const std::string& repo_id);

struct CachedSnapshot {
  std::string dir;       // the snapshot folder
  std::string revision;  // its commit
};

// The snapshot `revision` (a branch, a tag, or a commit) of `repo_id` in `cache_dir`; nullopt
// when the repository, the ref or the snapshot folder is absent. A ref naming a missing snapshot
// is an error naming both paths.
std::optional<CachedSnapshot> find_snapshot(const std::string& cache_dir, const std::string& repo_id,
                                            const std::string& revision);

// The refs/main snapshot when it holds a config.json (a model canrun can load); nullopt when it
// is absent or partial (e.g. only a README).
std::optional<CachedSnapshot> find_cached_snapshot(const std::string& cache_dir, const std::string& model_id);

}  // namespace canrun
