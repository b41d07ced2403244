// The tested run of a check the planner puts on more than one core: `canrun check` starts
// itself again as that many workers under mpirun (shard_launcher.h), each loading, compiling and
// running its shard. Every worker writes what it did into a folder the check made for it; the
// check reads it back, so a failing worker still ends as a row, never as a lost check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lab/check.h"
#include "lab/model_source.h"
#include "lab/status.h"
#include "lab/tested_run.h"

namespace canrun {

struct ShardedTestedRun {
  TestedRun run;                          // rank 0's, as far as it got
  std::optional<CheckFailure> failure;    // a worker's own failure, or how the workers ended
  int64_t peak_worker_bytes = 0;          // the largest peak resident memory of any worker that reported
};

// Runs the tested half of the check of `source` as `cores` workers.
ShardedTestedRun run_tested_sharded(const ModelSource& source, const CheckOptions& options, int cores);

// What the workers wrote into `dir` (rank<R>.json): rank 0's run, the first failure a worker
// reported (or FAIL_RUNTIME for a report that cannot be read), the largest peak memory.
// Missing reports are skipped; run_tested_sharded judges those by how mpirun ended.
ShardedTestedRun read_worker_reports(const std::string& dir, int cores);

// The worker's side (the hidden `check --shard-worker DIR`): runs this rank's tested run and
// writes DIR/rank<R>.json. Never throws for the model's failures: they go into the file, and
// the other workers are ended (they may be waiting for this one in a collective).
void run_check_worker(const CheckOptions& options, const std::string& result_dir);

}  // namespace canrun
