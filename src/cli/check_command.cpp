// canrun check MODEL: the lab's protocol on one model, printed as a row (--json) or a summary.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/runner_options.h"
#include "lab/check.h"
#include "lab/device_profile.h"
#include "lab/results_dir.h"
#include "lab/sharded_check.h"
#include "util/progress_line.h"

namespace canrun {
namespace {

struct CheckArgs {
  CLI::App* command = nullptr;
  CheckOptions options;
  bool no_plan_cache = false;
  bool json = false;
  std::string out_dir;  // empty: user_results_dir()
  bool no_record = false;
  std::string shard_worker_dir;
};

std::string ids_text(const std::optional<std::vector<int32_t>>& ids) {
  if (!ids) return "-";
  std::string text;
  for (int32_t id : *ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

std::string values_text(const std::optional<std::vector<double>>& values) {
  if (!values) return "-";
  std::string text;
  char number[32];
  for (double value : *values) {
    std::snprintf(number, sizeof(number), "%.4f", value);
    text += (text.empty() ? "" : " ") + std::string(number);
  }
  return text;
}

void print_training_summary(const ResultRow& row) {
  if (!row.train_losses) return;
  std::cout << "  losses:           " << values_text(row.train_losses) << "\n"
            << "  reference losses: " << values_text(row.reference_losses) << "\n";
  char line[256];
  std::snprintf(line, sizeof(line),
                "  step 0 on canrun's engine %.6f; restart after step %d: %s\n"
                "  first step %.3f s, steady steps p50 %.3f s, p95 %.3f s, %.1f tokens/s\n",
                row.native_step0_loss.value_or(NAN), row.restart_step.value_or(0),
                row.restart_check.value_or("-").c_str(), row.first_step_time_s.value_or(NAN),
                row.step_time_p50_s.value_or(NAN), row.step_time_p95_s.value_or(NAN), row.train_tokens_per_s.value_or(NAN));
  std::cout << line;
}

void print_summary(const ResultRow& row) {
  std::cout << row.model_id << ": " << row.result << "\n";
  if (row.error_message) std::cout << "  " << *row.error_message << "\n";
  std::cout << "  weights " << row.weights.value_or("-") << (row.revision ? " @ " + *row.revision : "") << ", " << row.architecture
            << ", cores " << (row.cores ? std::to_string(*row.cores) : "-") << ", " << row.compiler_version << " / "
            << row.library_version << "\n";
  char times[160];
  std::snprintf(times, sizeof(times), "  wall %s s, load %s s, compile %s s%s, peak host memory %s\n",
                row.wall_time_s ? std::to_string(*row.wall_time_s).c_str() : "-", row.load_time_s ? std::to_string(*row.load_time_s).c_str() : "-",
                row.compile_time_s ? std::to_string(*row.compile_time_s).c_str() : "-",
                row.plan_cache_hit && *row.plan_cache_hit ? " (plan from the cache)" : "",
                row.peak_host_memory_bytes ? format_bytes(*row.peak_host_memory_bytes).c_str() : "-");
  std::cout << times;
  if (row.planned_memory_bytes && row.memory_capacity_bytes)
    std::cout << "  planned " << format_bytes(*row.planned_memory_bytes) << " per core; the "
              << (row.cores ? "planned cores" : "most cores tried") << " hold "
              << format_bytes(*row.memory_capacity_bytes) << (row.reason_code ? " (" + *row.reason_code + ")" : "")
              << "\n";
  if (row.workload == "train") {
    print_training_summary(row);
    return;
  }
  if (row.generated_text) std::cout << "  text: " << *row.generated_text << "\n";
  std::cout << "  tokens: " << ids_text(row.generated_token_ids) << "\n";
}

void run(CheckArgs& args) {
  check_runner_options(*args.command, args.options.runner, args.options.torch);
  check_workload_options(*args.command, args.options.workload);
  args.options.plan_cache = !args.no_plan_cache;
  if (!args.shard_worker_dir.empty()) {
    run_check_worker(args.options, args.shard_worker_dir);
    return;
  }
  ProgressLine progress("check " + args.options.model, progress_style(args.json));
  args.options.progress = progress.reporter();
  const ResultRow row = run_check(args.options);
  progress.close();
  // Printed first: a folder that cannot take the row costs the record, not the check's result.
  if (args.json)
    std::cout << row_to_json(row).dump(-1, ' ', false, Json::error_handler_t::replace) << std::endl;
  else
    print_summary(row);
  if (args.no_record) return;
  const std::string dir = args.out_dir.empty() ? user_results_dir() : args.out_dir;
  const std::string file =
      (std::filesystem::path(dir) / dataset_file_name({row.compiler_version, row.library_version})).string();
  record_row(dir, row);
  std::cerr << "row recorded in " << file << " (canrun serve, query and diff read it)\n";
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* command = app.add_subcommand(
      "check",
      "Run the support lab's protocol on one model: plan cores, load and compile for the cpu backend, generate\n"
      "32 tokens greedily from a fixed prompt, verify against the ref backend, and print the dataset row.\n"
      "With --runner torch, PyTorch/Transformers run the model instead (run.py, in a child process).\n"
      "A model the planner puts on N > 1 cores of the profile runs sharded: N worker processes under mpirun\n"
      "(tensor/expert parallel, as `generate --cores N`); the reference stays one process.\n"
      "Test hook: CANRUN_CHECK_FAULT=KIND (or a comma list of KIND:MODEL_ID), KIND crash|hang|oom, makes the\n"
      "check abort, hang or allocate without bound (oom only under a finite address-space limit) just before\n"
      "generating; for the sweep's tests.");
  command->add_option("model", args->options.model,
                      "A model folder, or a Hub id ORG/NAME[@REVISION]: from the Hugging Face cache ($HF_HUB_CACHE, "
                      "$HF_HOME/hub or ~/.cache/huggingface/hub), else downloaded into it (unless HF_HUB_OFFLINE=1); "
                      "weights that cannot be had make a NOT_TESTED row saying why")
      ->required();
  command->add_option("--model-id", args->options.model_id,
                      "The Hub id of the model a folder or cached snapshot holds, so its row joins that catalog "
                      "entry (default: the catalog id config.json's _name_or_path names, else the folder)");
  command->add_flag("--synthetic", args->options.synthetic,
                    "Use synthetic weights from the catalog's config (fixed seed), never downloading, even when real "
                    "ones exist");
  command->add_option("--profile", args->options.profile, "Device profile to plan cores on (default local)");
  command->add_option("--profiles", args->options.profiles_file, "JSON file of extra device profiles")
      ->check(regular_file_check());
  command->add_option("--catalog", args->options.catalog, "Catalog file (default $CANRUN_CATALOG or data/catalog.jsonl)")
      ->check(regular_file_check());
  command->add_option("--cache-dir", args->options.cache_dir,
                      "Plan cache folder of the compiled cpu run (default: $CANRUN_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/canrun/plans, else ~/.cache/canrun/plans)");
  command->add_flag("--no-plan-cache", args->no_plan_cache,
                    "Compile without reading or writing the plan cache (plan_cache_hit is then null)");
  add_runner_options(*command, args->options.runner, args->options.torch);
  add_workload_options(*command, args->options.workload, args->options.train);
  command->add_flag("--json", args->json, "Print the row as one line of JSON");
  command->add_option("--out", args->out_dir,
                      "Dataset folder the row is added to (default: $CANRUN_RESULTS, else results/), replacing "
                      "an earlier row of the model for this version pair");
  command->add_flag("--no-record", args->no_record, "Print the row without adding it to any dataset folder")
      ->excludes("--out");
  // Internal: how a sharded check starts its workers (sharded_check.h); hidden from --help.
  command->add_option("--shard-worker", args->shard_worker_dir)->group("");
  args->command = command;
  command->callback([args] { run(*args); });
}

}  // namespace canrun
