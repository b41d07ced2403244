// `canrun cache pull` / `push`: copying the entries of the cache's compiler version between the
// local cache and a shared folder or HTTP(S) location. The remote layout is
//   <base>/<compiler_version>/index.json   {"compiler_version": ..., "entries": [{"digest", "manifest"}]}
//   <base>/<compiler_version>/<digest>/<file>   (manifest.json included)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan_cache.h"

namespace canrun {

struct TransferOptions {
  std::vector<std::string> headers;  // "Name: value", sent with every HTTP request
  bool progress = true;              // a progress line on stderr during long transfers
};

struct TransferReport {
  int copied = 0;      // entries copied
  int present = 0;     // entries skipped: already at the destination
  uint64_t bytes = 0;  // bytes of the copied entries' files
};

// Downloads the entries the source's index lists that the cache lacks, each into a temporary
// folder, verifies every file's size and checksum against its manifest, and only when all are
// good installs them. A failure installs nothing and names the URL or file at fault.
TransferReport pull_plans(const PlanCache& cache, const std::string& source, const TransferOptions& options);

// Uploads the cache's verified entries that the destination's index lacks: their files first,
// then the merged index, so a reader never sees an index naming missing files.
TransferReport push_plans(const PlanCache& cache, const std::string& destination, const TransferOptions& options);

}  // namespace canrun
