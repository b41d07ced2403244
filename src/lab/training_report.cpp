#include "lab/training_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/error.h"
#include "util/html_escape.h"

namespace canrun {
namespace {

std::string fixed(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

const ReportMetric& metric_named(const std::string& name) {
  for (const ReportMetric& metric : training_metrics())
    if (metric.name == name) return metric;
  fail(ErrorKind::kRuntime, "training report: no metric " + name);
}

std::vector<double> numbers(const Json& row, const std::string& path, const char* key) {
  if (!row.contains(key) || !row[key].is_array() || row[key].empty())
    fail(ErrorKind::kUsage, path + ": field '" + key + "' is missing or empty (a training check that ran its steps "
                                   "has it; this row is " + row.value("result", std::string("?")) + ")");
  try {
    return row[key].get<std::vector<double>>();
  } catch (const Json::exception&) {
    fail(ErrorKind::kUsage, path + ": field '" + key + "' is not a list of numbers");
  }
}

double number(const Json& row, const std::string& path, const char* key) {
  if (!row.contains(key) || !row[key].is_number())
    fail(ErrorKind::kUsage, path + ": field '" + key + "' is missing or not a number");
  return row[key].get<double>();
}

std::string component(const Json& row, const std::string& name) {
  if (row.contains("software_stack") && row["software_stack"].is_array())
    for (const Json& entry : row["software_stack"])
      if (entry.is_object() && entry.value("component", "") == name) return entry.value("version", "");
  return "";
}

// The seconds until the loss first reaches the reference's final loss (the steps up to and with
// that one); none when it never does.
std::optional<double> time_to_loss(const TrainingMeasures& m) {
  if (m.reference_losses.empty()) return std::nullopt;
  const double target = m.reference_losses.back();
  double seconds = 0;
  for (size_t step = 0; step < m.losses.size() && step < m.step_times.size(); ++step) {
    seconds += m.step_times[step];
    if (m.losses[step] <= target) return seconds;
  }
  return std::nullopt;
}

std::vector<std::vector<std::string>> comparison_rows(const TrainingReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportMetric& metric : training_metrics()) {
    const std::optional<double> a = training_metric_value(report.current, report.current, metric.name);
    const std::optional<double> b = training_metric_value(report.candidate, report.current, metric.name);
    const std::string ratio = a && b && *a > 0 ? fixed(*b / *a, "%.3g") + "x" : "";
    rows.push_back({metric.label + " (" + metric.name + ")", metric_text(a, metric.kind), metric_text(b, metric.kind),
                    ratio});
  }
  return rows;
}

std::string verdict(const TrainingReport& report) {
  if (report.go()) return "GO: every stop condition holds for the candidate";
  std::string failed;
  for (const ConditionResult& result : report.conditions)
    if (!result.met)
      failed += (failed.empty() ? "" : "; ") + result.condition.text + " (candidate: " +
                metric_text(result.value, metric_named(result.condition.metric).kind) + ")";
  return "NO-GO: " + failed;
}

std::string side_text(const TrainingMeasures& m) {
  return m.model + " on " + m.stack + ": " + m.result + " against its reference, " + std::to_string(m.losses.size()) +
         " steps, from " + m.path;
}

// Both runs' losses (solid: current blue, candidate orange) over the reference's (dashed grey).
std::string loss_curves_svg(const TrainingReport& report) {
  const double width = 600, height = 240, left = 60, right = 12, top = 12, bottom = 30;
  std::vector<const std::vector<double>*> series = {&report.current.reference_losses, &report.current.losses,
                                                    &report.candidate.losses};
  double low = INFINITY, high = -INFINITY;
  size_t steps = 0;
  for (const auto* values : series)
    for (double v : *values) {
      if (!std::isfinite(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
      steps = std::max(steps, values->size());
    }
  if (steps == 0) return "";
  const double span = high > low ? high - low : 1;
  const auto x = [&](size_t i) { return left + (steps > 1 ? double(i) / double(steps - 1) : 0.5) * (width - left - right); };
  const auto y = [&](double v) { return top + (1 - (v - low) / span) * (height - top - bottom); };
  const auto path = [&](const std::vector<double>& values, const char* style) {
    std::string d;
    for (size_t i = 0; i < values.size(); ++i) d += (i ? " L" : "M") + fixed(x(i), "%.1f") + "," + fixed(y(values[i]), "%.1f");
    return "<path d=\"" + d + "\" fill=\"none\" " + style + "/>";
  };
  return "<svg role=\"img\" aria-label=\"loss per step\" width=\"600\" height=\"240\" "
         "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"12\">"
         "<line x1=\"60\" y1=\"12\" x2=\"60\" y2=\"210\" stroke=\"#8c959f\"/>"
         "<line x1=\"60\" y1=\"210\" x2=\"588\" y2=\"210\" stroke=\"#8c959f\"/>"
         "<text x=\"54\" y=\"" + fixed(y(high) + 4, "%.0f") + "\" text-anchor=\"end\">" + fixed(high, "%.4g") + "</text>"
         "<text x=\"54\" y=\"" + fixed(y(low), "%.0f") + "\" text-anchor=\"end\">" + fixed(low, "%.4g") + "</text>"
         "<text x=\"324\" y=\"232\" text-anchor=\"middle\">step (0 to " + std::to_string(steps - 1) + ")</text>" +
         path(report.current.reference_losses, "stroke=\"#8c959f\" stroke-dasharray=\"4 3\" stroke-width=\"1.5\"") +
         path(report.current.losses, "stroke=\"#1f6feb\" stroke-width=\"1.5\"") +
         path(report.candidate.losses, "stroke=\"#d1242f\" stroke-width=\"1.5\"") + "</svg>\n"
         "<p>Solid blue: the current stack; solid red: the candidate; dashed grey: the reference (torch cpu float32, "
         "eager).</p>\n";
}

}  // namespace

const std::vector<ReportMetric>& training_metrics() {
  static const std::vector<ReportMetric> list = {
      {"step_time", "time per step, p50 of the steps after the first", MetricKind::kTime, true},
      {"first_step_time", "first step (compiling, warming up)", MetricKind::kTime, true},
      {"tokens_per_s", "training tokens per second", MetricKind::kRate, false},
      {"time_to_loss", "time to the reference's final loss", MetricKind::kTime, true},
      {"loss_delta", "final loss, difference from the current's", MetricKind::kFraction, true},
      {"peak_memory", "peak memory", MetricKind::kBytes, true},
      {"cost_per_1k_steps", "cost per 1,000 steps", MetricKind::kCost, true},
  };
  return list;
}

bool is_training_result(const Json& json) {
  // A bench result's "workload" is an object (its prompt and output sizes); a row's is a string.
  return json.is_object() && json.contains("workload") && json["workload"] == "train";
}

TrainingMeasures read_training_result(const std::string& path, std::optional<double> price_per_hour) {
  const Json row = read_json_file(path, ErrorKind::kUsage);
  if (!is_training_result(row))
    fail(ErrorKind::kUsage, path + ": not a training check's row (workload \"train\": canrun check MODEL --runner torch "
                                   "--workload train --json)");
  TrainingMeasures m;
  m.path = path;
  m.model = row.value("model_id", "?");
  m.result = row.value("result", "?");
  m.stack = row.value("compiler_version", "?") + " / " + row.value("library_version", "?") + ", " +
            component(row, "dtype") + ", " + component(row, "training");
  m.losses = numbers(row, path, "train_losses");
  m.reference_losses = numbers(row, path, "reference_losses");
  m.step_times = numbers(row, path, "step_times_s");
  m.step_time = number(row, path, "step_time_p50_s");
  m.first_step_time = number(row, path, "first_step_time_s");
  m.tokens_per_s = number(row, path, "train_tokens_per_s");
  for (const char* key : {"peak_device_memory_bytes", "peak_host_memory_bytes"})
    if (!m.peak_memory && row.contains(key) && row[key].is_number()) m.peak_memory = row[key].get<double>();
  if (price_per_hour && !(*price_per_hour > 0)) fail(ErrorKind::kUsage, "a price per hour must be positive");
  m.price_per_hour = price_per_hour;
  return m;
}

std::optional<double> training_metric_value(const TrainingMeasures& m, const TrainingMeasures& current,
                                            const std::string& metric) {
  if (metric == "step_time") return m.step_time;
  if (metric == "first_step_time") return m.first_step_time;
  if (metric == "tokens_per_s") return m.tokens_per_s;
  if (metric == "time_to_loss") return time_to_loss(m);
  if (metric == "loss_delta")
    return std::abs(m.losses.back() - current.losses.back()) / std::max(std::abs(current.losses.back()), 1e-12);
  if (metric == "peak_memory") return m.peak_memory;
  if (metric == "cost_per_1k_steps") {
    if (!m.price_per_hour) return std::nullopt;
    return *m.price_per_hour / 3600 * m.step_time * 1000;
  }
  fail(ErrorKind::kRuntime, "training report: no metric " + metric);
}

bool TrainingReport::go() const {
  return std::all_of(conditions.begin(), conditions.end(), [](const ConditionResult& r) { return r.met; });
}

TrainingReport make_training_report(TrainingMeasures current, TrainingMeasures candidate,
                                    const std::vector<StopCondition>& stop) {
  TrainingReport report{std::move(current), std::move(candidate), {}, {}};
  for (const StopCondition& condition : stop) {
    ConditionResult result{condition, training_metric_value(report.candidate, report.current, condition.metric), false};
    result.met = result.value &&
                 condition_holds(condition, *result.value,
                                 training_metric_value(report.current, report.current, condition.metric));
    report.conditions.push_back(result);
  }
  if (report.current.losses.size() != report.candidate.losses.size()) report.setup_differences.push_back("steps");
  if (report.current.reference_losses != report.candidate.reference_losses)
    report.setup_differences.push_back("reference losses (another model, batch or examples)");
  return report;
}

std::string training_report_markdown(const TrainingReport& report) {
  std::string out = "# Migration report: training\n\n";
  out += "- Current: " + side_text(report.current) + "\n";
  out += "- Candidate: " + side_text(report.candidate) + "\n";
  if (!report.setup_differences.empty()) {
    std::string fields;
    for (const std::string& field : report.setup_differences) fields += (fields.empty() ? "" : ", ") + field;
    out += "- **The two runs differ in** " + fields + ": the comparison is not like for like\n";
  }
  out += measures_markdown(comparison_rows(report), report.conditions, training_metrics());
  out += "\n**" + verdict(report) + "**\n";
  return out;
}

std::string training_report_html(const TrainingReport& report) {
  std::string out =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Migration report: training</title>\n"
      "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}"
      "table{border-collapse:collapse}td,th{border-bottom:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"
      ".go{color:#116329}.nogo{color:#a40e26}</style></head><body>\n<h1>Migration report: training</h1>\n<ul>\n";
  out += "<li>Current: " + html_escape(side_text(report.current)) + "</li>\n";
  out += "<li>Candidate: " + html_escape(side_text(report.candidate)) + "</li>\n";
  if (!report.setup_differences.empty())
    out += "<li><strong>The two runs differ: the comparison is not like for like.</strong></li>\n";
  out += "</ul>\n<p class=\"" + std::string(report.go() ? "go" : "nogo") + "\"><strong>" + html_escape(verdict(report)) +
         "</strong></p>\n<h2>Loss per step</h2>\n" + loss_curves_svg(report);
  out += measures_html(comparison_rows(report), report.conditions, training_metrics());
  return out + "</body></html>\n";
}

}  // namespace canrun
