#include "lab/sweep.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "lab/check.h"
#include "lab/model_source.h"
#include "lab/progress.h"
#include "lab/results_dir.h"
#include "lab/software_stack.h"
#include "lab/training_check.h"
#include "models/registry.h"

namespace canrun {
namespace {

struct Job {
  ModelSource source;
  std::unique_ptr<ChildProcess> child;
};

class Sweep {
 public:
  explicit Sweep(const SweepOptions& options)
      : options_(options),
        catalog_path_(options.catalog.empty() ? default_catalog_path() : options.catalog),
        catalog_(load_catalog(catalog_path_)),
        binary_(options.canrun_binary.empty() ? std::filesystem::read_symlink("/proc/self/exe").string()
                                              : options.canrun_binary) {}

  SweepSummary run() {
    const auto start = std::chrono::steady_clock::now();
    std::vector<CatalogEntry> selection = filter_catalog(catalog_, options_.filter);
    if (options_.shard)
      std::erase_if(selection, [&](const CatalogEntry& entry) { return !options_.shard->holds(entry.id); });
    if (options_.limit > 0 && static_cast<int64_t>(selection.size()) > options_.limit) selection.resize(options_.limit);
    // The newest row of each model with this workload's setup, in the pair's file or a shard's
    // part, says whether it is done.
    std::set<std::string> recorded;
    CheckOptions stack;
    stack.runner = options_.runner;
    stack.torch = options_.torch;
    ResultRow setup;
    setup.workload = workload_name(options_.workload);
    if (options_.workload == Workload::kTrain)
      setup.software_stack = training_software_stack(probe_torch_stack(options_.torch.python), options_.torch, options_.train);
    for (const ResultRow& row : read_pair(find_dataset_pair(options_.out_dir, check_version_pair(stack))))
      if (!options_.redo_results.count(row.result) && workload_setup(row) == workload_setup(setup))
        recorded.insert(row.model_id);

    share_cores_between_jobs();
    std::deque<ModelSource> queue;
    for (const CatalogEntry& entry : selection) {
      if (recorded.count(entry.id)) {
        ++summary_.already_recorded;
        continue;
      }
      queue.push_back(resolve_model(entry.id, WeightsPolicy::kCachedOrSynthetic, catalog_));
      if (queue.back().synthetic()) ++summary_.synthetic;
    }
    progress_ = std::make_unique<SweepProgress>(static_cast<int64_t>(queue.size()), isatty(STDERR_FILENO) == 1);
    std::vector<Job> running;
    while (!queue.empty() || !running.empty()) {
      while (!queue.empty() && static_cast<int64_t>(running.size()) < options_.jobs) {
        ModelSource source = std::move(queue.front());
        queue.pop_front();
        if (auto row = row_without_child(source)) {
          record(*row);
          continue;
        }
        progress_->started(source.model_id);
        running.push_back({source, start_child(source)});
      }
      bool any_done = false;
      for (auto job = running.begin(); job != running.end();) {
        if (!job->child->poll()) {
          ++job;
          continue;
        }
        record(row_from_child(job->source, job->child->outcome()));
        if (job->source.synthetic() && !options_.keep_synthetic) std::filesystem::remove_all(job->source.dir);
        job = running.erase(job);
        any_done = true;
      }
      if (!any_done && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    progress_->close();
    summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary_;
  }

 private:
  // A synthetic checkpoint removed after its check is made again with new file times, which a
  // plan's key includes: its plans could never be found again, so they are not kept.
  bool keeps_plans(const ModelSource& source) const { return !source.synthetic() || options_.keep_synthetic; }

  CheckOptions check_options(const ModelSource& source) const {
    CheckOptions check;
    check.model = source.model_id;
    check.profile = options_.profile;
    check.profiles_file = options_.profiles_file;
    check.catalog = options_.catalog;
    check.plan_cache = keeps_plans(source);
    check.runner = options_.runner;
    check.torch = options_.torch;
    check.workload = options_.workload;
    check.train = options_.train;
    if (check.plan_cache) check.cache_dir = options_.cache_dir;
    return check;
  }

  // Each child's kernels use its share of the cores (OpenMP), unless the user chose a count.
  void share_cores_between_jobs() const {
    const int64_t threads = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) / options_.jobs);
    setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), /*overwrite=*/0);
  }

  // Rows the sweep knows without running anything: unsupported families, excluded models.
  std::optional<ResultRow> row_without_child(const ModelSource& source) const {
    const CatalogEntry& entry = *source.entry;
    // A model without a known model_type (no config in the catalog's source) is excluded for that.
    const bool known = family_supported(entry) || entry.model_type.empty();
    if (known && entry.selected) return std::nullopt;
    const Status status = known ? Status::kExcluded : Status::kUnsupportedArchitecture;
    ResultRow row = initial_row(source, check_options(source), std::string(status_name(status)));
    row.error_type = known ? "excluded" : "unsupported_architecture";
    row.reason_code = known ? "not_selected" : "unsupported_architecture";
    row.weights.reset();  // nothing ran
    row.error_message = exclusion_reason(entry);
    return row;
  }

  std::unique_ptr<ChildProcess> start_child(const ModelSource& source) const {
    // The sweep records the row itself, in its own folder.
    std::vector<std::string> argv = {binary_, "check", source.model_id, "--json", "--no-record", "--profile",
                                     options_.profile};
    if (source.synthetic()) argv.push_back("--synthetic");  // a sweep never downloads
    if (!options_.catalog.empty()) argv.insert(argv.end(), {"--catalog", options_.catalog});
    if (!options_.profiles_file.empty()) argv.insert(argv.end(), {"--profiles", options_.profiles_file});
    if (options_.runner == Runner::kTorch)
      argv.insert(argv.end(), {"--runner", "torch", "--device", options_.torch.device, "--compile",
                               options_.torch.compile, "--python", options_.torch.python});
    if (options_.workload == Workload::kTrain) {
      const std::vector<std::string> train = training_arguments(options_.train);
      argv.insert(argv.end(), train.begin(), train.end());
    }
    if (!keeps_plans(source))
      argv.push_back("--no-plan-cache");
    else if (!options_.cache_dir.empty())
      argv.insert(argv.end(), {"--cache-dir", options_.cache_dir});
    return std::make_unique<ChildProcess>(argv, options_.timeout_s, options_.memory_limit_bytes);
  }

  ResultRow row_from_child(const ModelSource& source, const ChildOutcome& outcome) const {
    if (outcome.exit_code == 0 && !outcome.timed_out) {
      try {
        return row_from_json(parse_json(outcome.out, "the output of canrun check", ErrorKind::kRuntime));
      } catch (const std::exception& e) {
        ResultRow row = initial_row(source, check_options(source), std::string(status_name(Status::kFailRuntime)));
        row.error_type = "bad_child_output";
        row.error_message = std::string("canrun check printed no valid row: ") + e.what();
        return row;
      }
    }
    const ChildVerdict verdict = classify_child_exit(outcome, options_.timeout_s);
    ResultRow row = initial_row(source, check_options(source), std::string(status_name(verdict.status)));
    // The check alone has no limits: say which ones the sweep applied.
    char timeout[32];
    std::snprintf(timeout, sizeof(timeout), "%g", options_.timeout_s);
    const std::string limits = "# Recorded by canrun sweep with --timeout " + std::string(timeout) + " s" +
                               (options_.memory_limit_bytes > 0
                                    ? " and --memory-limit " + std::to_string(options_.memory_limit_bytes) + " bytes"
                                    : std::string()) +
                               "; run the check under the same limits to see " + row.result + ".\n";
    row.reproduce_script.insert(row.reproduce_script.find("set -euo pipefail"), limits);
    row.error_type = verdict.error_type;
    row.error_message = verdict.error_message;
    row.wall_time_s = outcome.seconds;
    row.peak_host_memory_bytes = outcome.peak_rss_bytes;
    return row;
  }

  // Where the rows go: the shard's part of the pair, or the pair's file.
  std::string part() const { return options_.shard ? options_.shard->part_name() : ""; }

  void record(const ResultRow& row) {
    record_row(options_.out_dir, row, part());
    ++summary_.counts[row.result];
    progress_->finished(row.model_id, row.result, row.wall_time_s.value_or(0));
  }

  const SweepOptions& options_;
  std::string catalog_path_;
  std::vector<CatalogEntry> catalog_;
  std::string binary_;
  std::unique_ptr<SweepProgress> progress_;
  SweepSummary summary_;
};

}  // namespace

ChildVerdict classify_child_exit(const ChildOutcome& outcome, double timeout_s) {
  char limit[32];
  std::snprintf(limit, sizeof(limit), "%g", timeout_s);
  if (outcome.timed_out)
    return {Status::kTimeout, "timeout", std::string("no result within the ") + limit + " s limit; killed"};
  const std::string said = last_line(outcome.err);
  const std::string tail = said.empty() ? "" : ": " + said;
  // Checked before the signal: a bad_alloc that escaped ends in SIGABRT.
  if (outcome.err.find("std::bad_alloc") != std::string::npos)
    return {Status::kOom, "std::bad_alloc", "an allocation failed" + tail};
  if (outcome.signal == SIGKILL)
    return {Status::kOom, "signal", "killed by SIGKILL, which the sweep did not send: the kernel's OOM killer" + tail};
  if (outcome.signal != 0) return {Status::kFailRuntime, "signal", "crashed: killed by " + signal_name(outcome.signal) + tail};
  return {Status::kFailRuntime, "exit", "canrun check exited with code " + std::to_string(outcome.exit_code) + tail};
}

SweepSummary run_sweep(const SweepOptions& options) {
  if (options.jobs < 1) fail(ErrorKind::kUsage, "--jobs must be at least 1");
  if (options.runner == Runner::kTorch) validate_torch_options(options.torch);
  validate_workload(options.workload, options.runner, options.train);
  if (options.timeout_s <= 0) fail(ErrorKind::kUsage, "--timeout must be positive");
  return Sweep(options).run();
}

}  // namespace canrun
