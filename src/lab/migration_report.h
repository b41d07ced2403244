// The migration report (`canrun report`): two bench results (canrun bench --json), the current
// platform and the candidate, side by side; the candidate checked against stop conditions fixed
// in advance ("p95_ttft<800ms,failure_rate<0.5%,cost_per_mtok<0.40"), with the one-off load and
// compile time amortised over a stated traffic volume; GO when every condition holds. With the
// lab's rows of the two stacks, each model's result on both beside the numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lab/version_diff.h"
#include "util/json.h"

namespace canrun {

// How a metric's values read: seconds, a fraction, bytes, a rate, a cost.
enum class MetricKind { kTime, kFraction, kBytes, kRate, kCost };

// A measure a report compares and a stop condition may name.
struct ReportMetric {
  std::string name, label;
  MetricKind kind;
  bool lower_is_better;
};

// The bench report's metrics (report_metric_names).
const std::vector<ReportMetric>& bench_metrics();

// "12.3 ms", "0.5%", "1.2 GB", "$0.04"; "not measured" for none.
std::string metric_text(std::optional<double> value, MetricKind kind);

// The measures a report compares and a condition may name, read from one bench result.
struct BenchMeasures {
  std::string path, model;
  std::string isa;  // the instruction set canrun ran; for a server's bench, its endpoint URL
  Json workload;
  double throughput = 0;  // generated tokens/s
  double p50_ttft = 0, p95_ttft = 0, p50_tpot = 0, p95_tpot = 0;  // seconds
  double failure_rate = 0;  // failed requests / requests
  // What only canrun's own run measures; none for a server's (bench --endpoint).
  std::optional<double> prefill_tps, decode_tps;  // tokens/s
  std::optional<double> load_time, compile_time;  // seconds; compile: cold, as a fresh deployment pays it
  std::optional<double> peak_memory;              // bytes resident
  std::optional<double> price_per_hour;
  std::optional<double> cost_per_mtok;  // per million generated tokens, while serving
};

// Errors name the file and the field.
BenchMeasures read_bench_result(const std::string& path);

struct StopCondition {
  std::string text;    // as written, e.g. "p95_ttft<800ms"
  std::string metric;  // a name of report_metric_names()
  std::string op;      // < <= > >=
  double value = 0;    // in the metric's base unit (seconds, a fraction, bytes, tokens/s, cost)
  bool relative = false;  // "0.8x": `value` times the current's value
};

// Comma-separated conditions over `metrics`; a usage error names the condition and what is wrong
// (unknown metric, listing the known ones; a unit the metric does not take; no number). A value
// with the unit x is relative: "step_time<0.8x" holds when the candidate's is below 0.8 times the
// current's.
std::vector<StopCondition> parse_stop_conditions(const std::string& text,
                                                 const std::vector<ReportMetric>& metrics = bench_metrics());

// Whether the candidate's value meets the condition; a relative one needs the current's value.
bool condition_holds(const StopCondition& condition, double candidate, std::optional<double> current);
std::vector<std::string> report_metric_names();

struct ReportOptions {
  std::vector<StopCondition> stop;
  double traffic_mtok = 1;  // million generated tokens the setup time is amortised over
};

struct ConditionResult {
  StopCondition condition;
  std::optional<double> value;  // the candidate's; none when it was not measured
  bool met = false;
};

// The measures' table (metric, current, candidate, candidate / current) and the stop
// conditions' table, as Markdown or HTML: the same for the bench and the training report.
std::string measures_markdown(const std::vector<std::vector<std::string>>& measures,
                              const std::vector<ConditionResult>& conditions, const std::vector<ReportMetric>& metrics);
std::string measures_html(const std::vector<std::vector<std::string>>& measures,
                          const std::vector<ConditionResult>& conditions, const std::vector<ReportMetric>& metrics);

struct MigrationReport {
  BenchMeasures current, candidate;
  std::vector<ConditionResult> conditions;
  std::vector<std::string> workload_differences;  // fields of the workload the two runs do not share
  // The two stacks' lab rows (current pair to candidate pair), when given: does each model run
  // on both, and as well. They inform; the verdict is the stop conditions'.
  std::optional<VersionDiff> lab;
  bool go() const;
};

MigrationReport make_report(BenchMeasures current, BenchMeasures candidate, const ReportOptions& options);

// The candidate's (or current's) value of a metric; none when not measured (a cost without a price).
std::optional<double> metric_value(const BenchMeasures& measures, const std::string& metric, double traffic_mtok);

std::string report_markdown(const MigrationReport& report, const ReportOptions& options);
// The same as a standalone HTML page, with a bar chart of the candidate relative to the current.
std::string report_html(const MigrationReport& report, const ReportOptions& options);

}  // namespace canrun
