#include "lab/sharded_check.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <vector>

#include "util/atomic_file.h"
#include "lab/catalog.h"
#include "lab/status.h"
#include "parallel/communicator.h"
#include "parallel/shard_launcher.h"
#include "util/error.h"
#include "util/json.h"
#include "util/process_stats.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

fs::path rank_file(const fs::path& dir, int rank) { return dir / ("rank" + std::to_string(rank) + ".json"); }

// The worker command: the same check, told where to report.
std::vector<std::string> worker_arguments(const ModelSource& source, const CheckOptions& options, const fs::path& dir) {
  std::vector<std::string> args = {"check"};
  const std::vector<std::string> check = check_arguments(source, options);
  args.insert(args.end(), check.begin(), check.end());
  if (!options.plan_cache) args.push_back("--no-plan-cache");
  if (!options.cache_dir.empty()) args.insert(args.end(), {"--cache-dir", options.cache_dir});
  args.insert(args.end(), {"--shard-worker", dir.string()});
  return args;
}

// The last line of a file with a word in it (mpirun frames its messages in lines of dashes):
// what mpirun says about how a worker ended.
std::string last_said(const fs::path& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (std::any_of(line.begin(), line.end(), [](unsigned char c) { return std::isalpha(c); })) last = line;
  return last;
}

}  // namespace

ShardedTestedRun read_worker_reports(const std::string& dir, int cores) {
  ShardedTestedRun sharded;
  for (int rank = 0; rank < cores; ++rank) {
    const fs::path path = rank_file(dir, rank);
    if (!fs::exists(path)) continue;
    const std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(cores);
    try {
      const Json report = read_json_file(path.string(), ErrorKind::kRuntime);
      sharded.peak_worker_bytes = std::max(sharded.peak_worker_bytes, number_or(report, "peak_resident_bytes", int64_t{0}));
      if (rank == 0) sharded.run = tested_run_from_json(report.at("run"));
      if (report.contains("failure") && !sharded.failure) {
        const Json& failure = report.at("failure");
        const std::optional<Status> status = parse_status(failure.at("result").get<std::string>());
        sharded.failure = CheckFailure{status.value_or(Status::kFailRuntime), failure.at("error_type").get<std::string>(),
                                       who + ": " + failure.at("error_message").get<std::string>()};
      }
    } catch (const std::exception& e) {
      // A report the check cannot read says nothing about the model's stage: the run failed.
      if (!sharded.failure)
        sharded.failure = CheckFailure{Status::kFailRuntime, "workers_failed",
                                       who + " left a report that cannot be read: " + e.what()};
    }
  }
  return sharded;
}

ShardedTestedRun run_tested_sharded(const ModelSource& source, const CheckOptions& options, int cores) {
  const TemporaryDirectory dir("canrun-check-workers-");
  const fs::path stderr_path = dir.path() / "workers.stderr";
  const int status = run_workers(cores, worker_arguments(source, options, dir.path()), stderr_path.string());

  ShardedTestedRun sharded = read_worker_reports(dir.path().string(), cores);
  if (!sharded.failure && (status != 0 || !fs::exists(rank_file(dir.path(), 0)))) {
    const std::string said = last_said(stderr_path);
    sharded.failure = CheckFailure{Status::kFailRuntime, "workers_failed",
                                   "the " + std::to_string(cores) + " workers of the sharded run (mpirun) ended with "
                                   "status " + std::to_string(status) + (said.empty() ? "" : ": " + said)};
  }
  return sharded;
}

void run_check_worker(const CheckOptions& options, const std::string& result_dir) {
  const int cores = mpi_world_size();
  if (cores < 2) fail(ErrorKind::kUsage, "--shard-worker: only `canrun check` starts its workers, under mpirun");
  const int rank = mpi_world_rank();
  Json report;
  TestedRun run;
  CheckStage stage = CheckStage::kLoad;
  try {
    const std::vector<CatalogEntry> catalog =
        load_catalog(options.catalog.empty() ? default_catalog_path() : options.catalog);
    const WeightsPolicy policy = options.synthetic ? WeightsPolicy::kSynthetic : WeightsPolicy::kReal;
    const ModelSource source = resolve_model(options.model, policy, catalog, options.model_id);
    run_tested(source, options, mpi_communicator(cores), run, stage);
  } catch (...) {
    const CheckFailure failure = current_failure(stage);
    report["failure"] = {{"result", status_name(failure.status)},
                         {"error_type", failure.type},
                         {"error_message", failure.message}};
  }
  if (rank == 0) report["run"] = tested_run_to_json(run);
  report["peak_resident_bytes"] = peak_resident_bytes();
  write_file_atomically(rank_file(result_dir, rank).string(), report.dump());
  if (report.contains("failure")) end_all_workers(1);
}

}  // namespace canrun
