// canrun report: the migration report of two bench results against stop conditions.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "lab/migration_report.h"
#include "lab/results_dir.h"
#include "lab/training_report.h"
#include "util/error.h"

namespace canrun {
namespace {

struct ReportArgs {
  std::string current, candidate;
  std::string stop;
  ReportOptions options;
  std::string format = "markdown";
  std::string out;
  bool fail_on_no_go = false;
  std::string lab_data;  // empty: dataset_folders' default
  std::string lab_current, lab_candidate;  // version pairs, COMPILER__LIBRARY
  std::optional<double> current_price, candidate_price;  // training results: $ per hour of each stack
};

void write_report(const ReportArgs& args, const std::string& text, bool go) {
  if (args.out.empty()) {
    std::cout << text;
  } else {
    std::ofstream file(args.out);
    file << text;
    file.close();
    if (!file) fail(ErrorKind::kIo, args.out + ": cannot write the report");
    std::cout << (go ? "GO" : "NO-GO") << ": report written to " << args.out << "\n";
  }
  if (args.fail_on_no_go && !go) fail(ErrorKind::kRuntime, "NO-GO: a stop condition failed (--fail-on-no-go)");
}

// Two training checks' rows: the training report.
void run_training(const ReportArgs& args) {
  if (!args.lab_current.empty())
    fail(ErrorKind::kUsage, "--lab-current and --lab-candidate go with bench results, not training checks");
  const TrainingReport report =
      make_training_report(read_training_result(args.current, args.current_price),
                           read_training_result(args.candidate, args.candidate_price),
                           parse_stop_conditions(args.stop, training_metrics()));
  write_report(args, args.format == "html" ? training_report_html(report) : training_report_markdown(report),
               report.go());
}

void run(ReportArgs& args) {
  const bool current_trains = is_training_result(read_json_file(args.current, ErrorKind::kUsage));
  if (current_trains != is_training_result(read_json_file(args.candidate, ErrorKind::kUsage)))
    fail(ErrorKind::kUsage, "one result is a training check's row and the other is not: compare two bench results "
                            "or two training checks");
  if (current_trains) return run_training(args);
  if (args.current_price || args.candidate_price)
    fail(ErrorKind::kUsage, "--current-price and --candidate-price go with training checks; a bench result carries "
                            "its own price (canrun bench --price-per-hour)");
  args.options.stop = parse_stop_conditions(args.stop);
  if (args.lab_current.empty() != args.lab_candidate.empty())
    fail(ErrorKind::kUsage, "--lab-current and --lab-candidate go together: the two stacks' version pairs");
  MigrationReport report =
      make_report(read_bench_result(args.current), read_bench_result(args.candidate), args.options);
  if (!args.lab_current.empty())
    report.lab = diff_versions(dataset_folders(args.lab_data), parse_version_pair(args.lab_current, "--lab-current"),
                               parse_version_pair(args.lab_candidate, "--lab-candidate"), {}, "--lab-current",
                               "--lab-candidate");
  write_report(args, args.format == "html" ? report_html(report, args.options) : report_markdown(report, args.options),
               report.go());
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  std::string metrics, training;
  for (const std::string& name : report_metric_names()) metrics += (metrics.empty() ? "" : ", ") + name;
  for (const ReportMetric& metric : training_metrics()) training += (training.empty() ? "" : ", ") + metric.name;
  CLI::App* command = app.add_subcommand(
      "report",
      "The migration report: two `canrun bench --json` results, the current platform and the candidate, side by "
      "side, the candidate checked against stop conditions, load and compile time amortised over a traffic volume; "
      "or two training checks (`canrun check --runner torch --workload train --json` rows): time per step, time to "
      "the reference's final loss, memory and cost per 1,000 steps. GO when every condition holds, else NO-GO "
      "naming the conditions that failed");
  command->add_option("current", args->current, "The current platform's bench result, or training check row (JSON)")
      ->required()
      ->check(regular_file_check());
  command->add_option("candidate", args->candidate, "The candidate's bench result, or training check row (JSON)")
      ->required()
      ->check(regular_file_check());
  command->add_option("--stop", args->stop,
                      "Conditions the candidate must meet, comma-separated, e.g. \"p95_ttft<800ms,failure_rate<0.5%,"
                      "cost_per_mtok<0.40\". Metrics: " + metrics + ". Training checks: \"loss_delta<1%,step_time<0.8x\" "
                      "over " + training + ". Units: ms, s, us, min; %; GB, MB, GiB, MiB; or x: a multiple of the "
                      "current's value");
  command->add_option("--current-price", args->current_price,
                      "Training checks: the current stack's price per hour, for cost_per_1k_steps");
  command->add_option("--candidate-price", args->candidate_price,
                      "Training checks: the candidate's price per hour, for cost_per_1k_steps");
  command->add_option("--traffic-mtok", args->options.traffic_mtok,
                      "Million generated tokens the load and compile time are amortised over (default 1)");
  command->add_option("--format", args->format, "markdown (default) or html (with a chart)")
      ->check(CLI::IsMember({"markdown", "html"}));
  command->add_option("--out", args->out, "Write the report to this file instead of the terminal");
  command->add_flag("--fail-on-no-go", args->fail_on_no_go, "Exit 1 on NO-GO, for CI");
  command->add_option("--lab-current", args->lab_current,
                      "The current stack's version pair in the lab's dataset (COMPILER__LIBRARY): with "
                      "--lab-candidate, adds each model's result on both stacks");
  command->add_option("--lab-candidate", args->lab_candidate,
                      "The candidate stack's version pair in the lab's dataset");
  command->add_option("--lab-data", args->lab_data,
                      "The lab's dataset folder (default: the dataset canrun ships and your own results in " +
                          user_results_dir() + "/)");
  command->callback([args] { run(*args); });
}

}  // namespace canrun
