// The training half of the migration report (`canrun report` given two training checks, the rows
// `canrun check --runner torch --workload train --json` prints): time per step, time to the
// reference's final loss, memory and cost per 1,000 steps of the current stack and the candidate
// side by side, the candidate checked against stop conditions ("loss_delta<1%,step_time<0.8x");
// GO when every condition holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lab/migration_report.h"
#include "util/json.h"

namespace canrun {

// What a training report compares, read from one training check's row.
struct TrainingMeasures {
  std::string path, model;
  std::string stack;   // the version pair, dtype and fine-tuning setup
  std::string result;  // the row's status: the training check's own verdict against its reference
  std::vector<double> losses, reference_losses, step_times;
  double step_time = 0;        // median of the steps after the first, seconds
  double first_step_time = 0;  // compiling and warming up
  double tokens_per_s = 0;
  std::optional<double> peak_memory;     // bytes: the device's where measured, else the host's
  std::optional<double> price_per_hour;  // given on the command line
};

// The metrics a training report shows and a stop condition may name: step_time, first_step_time,
// tokens_per_s, time_to_loss, loss_delta, peak_memory, cost_per_1k_steps.
const std::vector<ReportMetric>& training_metrics();

// True when `json` is a training check's row (workload "train").
bool is_training_result(const Json& json);

// Errors name the file and the field (a row that never trained has no losses to compare).
TrainingMeasures read_training_result(const std::string& path, std::optional<double> price_per_hour);

// The value of a metric for `measures`, `current` giving loss_delta its base; none when not
// measured (a cost without a price, a loss never reached).
std::optional<double> training_metric_value(const TrainingMeasures& measures, const TrainingMeasures& current,
                                            const std::string& metric);

struct TrainingReport {
  TrainingMeasures current, candidate;
  std::vector<ConditionResult> conditions;
  std::vector<std::string> setup_differences;  // what the two runs do not share (steps, examples)
  bool go() const;
};

TrainingReport make_training_report(TrainingMeasures current, TrainingMeasures candidate,
                                    const std::vector<StopCondition>& stop);

std::string training_report_markdown(const TrainingReport& report);
// The same as a standalone HTML page, with both loss curves over the reference's.
std::string training_report_html(const TrainingReport& report);

}  // namespace canrun
