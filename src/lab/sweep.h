// canrun sweep: the check protocol over a catalog selection, each model in its own child
// process (`canrun check MODEL --json`) with a wall-time and a memory limit, rows written to
// the dataset as each model finishes; a rerun continues where an interrupted sweep stopped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "lab/catalog.h"
#include "lab/child_process.h"
#include "lab/dataset.h"
#include "lab/results_dir.h"
#include "lab/status.h"
#include "lab/sweep_shard.h"
#include "lab/torch_runner.h"
#include "lab/torch_training.h"

namespace canrun {

struct SweepOptions {
  std::string catalog;  // empty: default_catalog_path()
  CatalogFilter filter;
  std::optional<SweepShard> shard;  // only this slice of the selection, its rows into a part of its own
  int64_t limit = 0;  // the first N of the selection (of the shard's slice); 0: all
  std::string profile = "local";
  std::string profiles_file;
  std::string cache_dir;  // plan cache of each check that keeps its plans; empty: the default folder
  std::string out_dir = user_results_dir();
  double timeout_s = 600;
  int64_t memory_limit_bytes = 0;  // RLIMIT_AS of each child; 0: none
  int64_t jobs = 1;
  bool keep_synthetic = false;  // keep each synthetic checkpoint on disk after its check
  std::set<std::string> redo_results;  // models recorded with one of these results are checked again
  std::string canrun_binary;  // the binary to run checks with; empty: this one (/proc/self/exe)
  Runner runner = Runner::kCanrun;  // the engine each check tests, as canrun check --runner
  TorchOptions torch;
  Workload workload = Workload::kInference;  // as canrun check --workload (train: torch runner only)
  TrainOptions train;
};

struct SweepSummary {
  std::map<std::string, int64_t> counts;  // per status, of the rows written now
  int64_t already_recorded = 0;           // skipped: a row for this version pair exists
  int64_t synthetic = 0;                  // models checked with synthetic weights: not in the cache
  double seconds = 0;
};

SweepSummary run_sweep(const SweepOptions& options);

// How a child that gave no row ended, as a status with its error type and message.
struct ChildVerdict {
  Status status;
  std::string error_type;
  std::string error_message;
};

// TIMEOUT when we killed it at the limit; OOM for a SIGKILL we did not send (the kernel's OOM
// killer) or a std::bad_alloc on stderr; FAIL_RUNTIME naming the signal or exit code.
ChildVerdict classify_child_exit(const ChildOutcome& outcome, double timeout_s);

}  // namespace canrun
