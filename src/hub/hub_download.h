// Downloading a model repository from the Hub into the Hugging Face cache, laid out exactly as
// huggingface_hub's snapshot_download lays it out, so either tool finds what the other fetched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hub/hub_ref.h"

namespace canrun {

// What canrun reads from a model repository: configs, tokenizer files, chat templates, weights
// and their index.
const std::vector<std::string>& default_hub_patterns();

struct HubSettings {
  std::string endpoint;   // $HF_ENDPOINT, else https://huggingface.co
  std::string token;      // $HF_TOKEN, else the file huggingface_hub's login writes
  std::string cache_dir;  // hf_hub_cache_dir()
  bool offline = false;   // $HF_HUB_OFFLINE
};

// The settings from the environment, as huggingface_hub reads them.
HubSettings hub_settings_from_environment();

struct PullOptions {
  HubRef ref;
  std::vector<std::string> include = default_hub_patterns();  // fnmatch globs on the repository path
  std::vector<std::string> exclude;
  int jobs = 8;  // files downloaded at once
};

struct PulledFile {
  std::string path;  // in the repository
  int64_t size = 0;
  bool downloaded = false;  // false: its blob was in the cache already
};

struct PullResult {
  std::string snapshot_dir;
  std::string commit;
  std::vector<PulledFile> files;
  int64_t bytes_downloaded = 0;
};

// Progress of a pull: called from the downloading threads, one at a time.
struct PullProgress {
  std::function<void(int64_t total_bytes, int64_t files)> started;
  std::function<void(int64_t bytes)> advanced;
  std::function<void(const PulledFile& file)> finished;
};

// Fetches the repository's file list at `options.ref.revision`, then every file the globs keep
// that is not in the cache, resuming a partial blob, checking each blob's size and hash (sha256
// for LFS files, git's blob sha1 for the rest) before it takes its name, and links the snapshot.
// With settings.offline it only looks in the cache. Errors name the repository, revision or
// file and what to do; a failed pull leaves no file under a final name.
PullResult pull_model(const PullOptions& options, const HubSettings& settings, const PullProgress& progress = {});

}  // namespace canrun
