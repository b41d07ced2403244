// canrun sweep: checks a catalog selection, each model in its own process, into the dataset.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/runner_options.h"
#include "hub/hf_cache.h"
#include "lab/device_profile.h"
#include "lab/status.h"
#include "lab/sweep.h"

namespace canrun {
namespace {

struct SweepArgs {
  CLI::App* command = nullptr;
  SweepOptions options;
  bool all = false;
  std::string memory_limit;
  std::string shard;
};

void run(SweepArgs& args) {
  check_runner_options(*args.command, args.options.runner, args.options.torch);
  check_workload_options(*args.command, args.options.workload);
  args.options.filter.selected_only = !args.all;
  if (!args.memory_limit.empty()) args.options.memory_limit_bytes = parse_byte_size(args.memory_limit);
  if (!args.shard.empty()) args.options.shard = parse_sweep_shard(args.shard);
  const SweepSummary summary = run_sweep(args.options);
  std::string counts;
  for (const auto& [status, count] : summary.counts) counts += (counts.empty() ? "" : ", ") + status + " " + std::to_string(count);
  std::printf("sweep done in %.1f s: %s%s; %lld already recorded; dataset in %s\n", summary.seconds,
              counts.empty() ? "no new rows" : "", counts.c_str(), static_cast<long long>(summary.already_recorded),
              args.options.out_dir.c_str());
  if (summary.synthetic > 0)
    std::printf("%lld models had no real weights in the Hugging Face cache (%s) and were checked with synthetic "
                "weights; `canrun pull ORG/NAME` fetches real ones for the next sweep\n",
                static_cast<long long>(summary.synthetic), hf_hub_cache_dir().c_str());
  if (args.options.shard)
    std::printf("shard %s: rows in each pair's %s.parquet part; when every shard is done, canrun dataset merge %s\n",
                args.shard.c_str(), args.options.shard->part_name().c_str(), args.options.out_dir.c_str());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  SweepOptions& options = args->options;
  CLI::App* command = app.add_subcommand(
      "sweep",
      "Check every model of a catalog selection, each in its own process with a wall-time and memory limit,\n"
      "adding one row per model to the dataset as it finishes. A rerun skips models that already have a row\n"
      "for this version pair and workload setup (--workload train: its training setup and dtype), so an\n"
      "interrupted sweep resumes.");
  command->add_option("--task", options.filter.task, "Only this task")->check(CLI::IsMember(catalog_tasks()));
  CLI::Option* all =
      command->add_flag("--all", args->all, "Also the models the catalog does not select (recorded as EXCLUDED)");
  command->add_flag("--selected")->description("Only the selected models (the default)")->excludes(all);
  command->add_option("--search", options.filter.search, "Only ids containing this text (any case)");
  command->add_option("--shard", args->shard,
                      "Only the K-th of N disjoint slices of the selection, as K/N (a model's slice follows from its "
                      "id);\nits rows go to the pair's part <pair>/part-K-of-N.parquet until canrun dataset merge")
      ->type_name("K/N");
  command->add_option("--limit", options.limit, "Only the first N models of the selection (of the shard's slice)")
      ->check(CLI::PositiveNumber);
  command->add_option("--profile", options.profile, "Device profile to plan cores on (default local)");
  command->add_option("--profiles", options.profiles_file, "JSON file of extra device profiles")
      ->check(regular_file_check());
  command->add_option("--catalog", options.catalog, "Catalog file (default $CANRUN_CATALOG or data/catalog.jsonl)")
      ->check(regular_file_check());
  command->add_option("--cache-dir", options.cache_dir,
                      "Plan cache folder the checks compile into (default: $CANRUN_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/canrun/plans, else ~/.cache/canrun/plans); checks of synthetic weights\n"
                      "the sweep removes afterwards compile without the plan cache (see --keep-synthetic)");
  command->add_option("--out", options.out_dir, "Dataset folder (default: $CANRUN_RESULTS, else results/)");
  command->add_option("--timeout", options.timeout_s, "Wall-time limit per model in seconds (default 600)")
      ->check(CLI::PositiveNumber);
  command->add_option("--memory-limit", args->memory_limit,
                      "Address-space limit per model, e.g. \"16 GiB\" (RLIMIT_AS; default none)")
      ->check(byte_size_check());
  command->add_option("--jobs,-j", options.jobs, "Models checked at once (default 1)")->check(CLI::PositiveNumber);
  command->add_option("--redo", options.redo_results,
                      "Check again the models whose row has this result, replacing the row (repeatable;\n"
                      "e.g. --redo TIMEOUT after raising --timeout)")
      ->check([](const std::string& name) {
        if (parse_status(name)) return std::string();
        std::string known;
        for (const StatusInfo& status : all_statuses()) known += (known.empty() ? "" : ", ") + std::string(status.name);
        return "unknown result " + name + " (one of: " + known + ")";
      });
  add_runner_options(*command, options.runner, options.torch);
  add_workload_options(*command, options.workload, options.train);
  command->add_flag("--keep-synthetic", options.keep_synthetic,
                   "Keep the synthetic checkpoints made for the checks (by default each is removed after its\n"
                   "check; the same config and seed make the same bytes again)");
  args->command = command;
  command->callback([args] { run(*args); });
}

}  // namespace canrun
