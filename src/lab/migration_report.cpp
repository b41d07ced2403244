#include "lab/migration_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "util/error.h"
#include "util/html_escape.h"

namespace canrun {

const std::vector<ReportMetric>& bench_metrics() {
  static const std::vector<ReportMetric> list = {
      {"throughput", "throughput (generated tokens/s)", MetricKind::kRate, false},
      {"prefill_tps", "prefill (tokens/s)", MetricKind::kRate, false},
      {"decode_tps", "decode (tokens/s per request)", MetricKind::kRate, false},
      {"p50_ttft", "time to first token, p50", MetricKind::kTime, true},
      {"p95_ttft", "time to first token, p95", MetricKind::kTime, true},
      {"p50_tpot", "time per output token, p50", MetricKind::kTime, true},
      {"p95_tpot", "time per output token, p95", MetricKind::kTime, true},
      {"failure_rate", "failure rate", MetricKind::kFraction, true},
      {"peak_memory", "peak memory (resident)", MetricKind::kBytes, true},
      {"load_time", "load time", MetricKind::kTime, true},
      {"compile_time", "compile time (cold)", MetricKind::kTime, true},
      {"setup_share", "load and compile, share of the serving time", MetricKind::kFraction, true},
      {"cost_per_mtok", "cost per million generated tokens", MetricKind::kCost, true},
      {"amortised_cost_per_mtok", "the same with load and compile amortised", MetricKind::kCost, true},
  };
  return list;
}

namespace {

using Kind = MetricKind;

const ReportMetric* find_metric(const std::vector<ReportMetric>& list, const std::string& name) {
  for (const ReportMetric& metric : list)
    if (metric.name == name) return &metric;
  return nullptr;
}

const ReportMetric* find_metric(const std::string& name) { return find_metric(bench_metrics(), name); }

std::string fixed(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

std::string metric_text(std::optional<double> value, MetricKind kind) {
  if (!value) return "not measured";
  const double v = *value;
  switch (kind) {
    case Kind::kTime: return v < 1 ? fixed(v * 1e3, "%.3g ms") : fixed(v, "%.3g s");
    case Kind::kFraction: return fixed(v * 100, "%.3g%%");
    case Kind::kBytes: return fixed(v / 1e9, "%.3g GB");
    case Kind::kRate: return fixed(v, "%.1f");
    case Kind::kCost: return fixed(v, "$%.4g");
  }
  return "";
}

namespace {

// `field` ("first_token_s.p95") of a bench result: a number, or a usage error naming it.
double number_at(const Json& json, const std::string& path, const std::string& field) {
  const Json* value = &json;
  for (size_t start = 0; start <= field.size();) {
    const size_t dot = std::min(field.find('.', start), field.size());
    const std::string key = field.substr(start, dot - start);
    if (!value->is_object() || !value->contains(key)) value = nullptr;
    else value = &(*value)[key];
    if (!value) break;
    start = dot + 1;
  }
  if (!value || !value->is_number())
    fail(ErrorKind::kUsage, path + ": field '" + field + "' is missing or not a number (is this `canrun bench --json` "
                                   "output?)");
  return value->get<double>();
}

std::optional<double> optional_number(const Json& json, const std::string& key) {
  if (!json.contains(key) || json[key].is_null()) return std::nullopt;
  return json[key].get<double>();
}

// A condition's number with its unit, in the metric's base unit.
double parse_value(const std::string& text, const ReportMetric& metric, const std::string& condition) {
  std::string number = text;
  if (metric.kind == Kind::kCost && number.starts_with("$")) number.erase(0, 1);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || !std::isfinite(value))
    fail(ErrorKind::kUsage, "--stop '" + condition + "': '" + text + "' is not a number with a unit");
  const std::string unit = number.substr(used);
  if (unit == "x") return value;  // a multiple of the current's value, in its unit
  const auto scale = [&](std::initializer_list<std::pair<const char*, double>> units) {
    std::string known;
    for (const auto& [name, factor] : units) {
      if (unit == name) return factor;
      known += std::string(known.empty() ? "" : ", ") + (*name ? name : "none");
    }
    fail(ErrorKind::kUsage, "--stop '" + condition + "': " + metric.name + " takes the units " + known +
                                " or x (a multiple of the current's), not '" + unit + "'");
  };
  switch (metric.kind) {
    case Kind::kTime: return value * scale({{"ms", 1e-3}, {"s", 1.0}, {"us", 1e-6}, {"min", 60.0}});
    case Kind::kFraction: return value * scale({{"%", 0.01}, {"", 1.0}});
    case Kind::kBytes: return value * scale({{"GB", 1e9}, {"MB", 1e6}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}});
    case Kind::kRate: return value * scale({{"", 1.0}, {"tok/s", 1.0}});
    case Kind::kCost: return value * scale({{"", 1.0}});
  }
  return value;
}

bool holds(double value, const std::string& op, double bound) {
  if (op == "<") return value < bound;
  if (op == "<=") return value <= bound;
  if (op == ">") return value > bound;
  return value >= bound;
}

std::string workload_text(const BenchMeasures& m) {
  const Json& w = m.workload;
  const auto text = [&](const char* key) { return w.contains(key) ? (w[key].is_string() ? w[key].get<std::string>()
                                                                                          : w[key].dump())
                                                                    : std::string("?"); };
  const int64_t image_tokens = w.value("image_tokens", int64_t{0});
  return "prompt " + (image_tokens > 0 ? std::to_string(image_tokens) + " image tokens then " : std::string()) +
         text("prompt_tokens") + " tokens, output " + text("output_tokens") + " tokens, " + text("requests") +
         " requests, concurrency " + text("concurrency");
}

// The rows both formats show: metric label, current, candidate, candidate / current.
std::vector<std::vector<std::string>> comparison_rows(const MigrationReport& report, double traffic_mtok) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportMetric& metric : bench_metrics()) {
    const std::optional<double> a = metric_value(report.current, metric.name, traffic_mtok);
    const std::optional<double> b = metric_value(report.candidate, metric.name, traffic_mtok);
    const std::string ratio = a && b && *a > 0 ? fixed(*b / *a, "%.3g") + "x" : "";
    rows.push_back({metric.label + " (" + metric.name + ")", metric_text(a, metric.kind), metric_text(b, metric.kind), ratio});
  }
  return rows;
}

bool passes(const std::optional<ResultRow>& row) { return row && row_passes(*row); }

// Per model of the lab's two pairs: id, current result, candidate result, what changed.
std::vector<std::vector<std::string>> lab_rows(const VersionDiff& lab) {
  std::vector<std::vector<std::string>> rows;
  for (const ModelDiff& model : lab.models) {
    std::string changes;
    for (const std::string& change : model.changes) changes += (changes.empty() ? "" : "; ") + change;
    rows.push_back({model.model_id, model.from ? model.from->result : "no row", model.to ? model.to->result : "no row",
                    changes.empty() ? "unchanged" : changes});
  }
  return rows;
}

std::string lab_summary(const VersionDiff& lab) {
  int current = 0, candidate = 0, both = 0;
  for (const ModelDiff& model : lab.models) {
    current += passes(model.from);
    candidate += passes(model.to);
    both += passes(model.from) && passes(model.to);
  }
  const DiffCounts counts = count_changes(lab.models);
  return std::to_string(lab.models.size()) + " models in " + lab.from.where() + " (current) or " + lab.to.where() +
         " (candidate): " + std::to_string(current) + " pass on the current stack, " + std::to_string(candidate) +
         " on the candidate, " + std::to_string(both) + " on both; " + std::to_string(counts.regressions) +
         (counts.regressions == 1 ? " regression" : " regressions") + "; generated tokens agree on " +
         std::to_string(counts.tokens_agree) + " of " +
         std::to_string(counts.tokens_compared) + " compared";
}

std::string verdict(const MigrationReport& report) {
  if (report.go()) return "GO: every stop condition holds for the candidate";
  std::string failed;
  for (const ConditionResult& result : report.conditions) {
    if (result.met) continue;
    failed += (failed.empty() ? "" : "; ") + result.condition.text + " (candidate: " +
              metric_text(result.value, find_metric(result.condition.metric)->kind) + ")";
  }
  return "NO-GO: " + failed;
}

}  // namespace

std::string measures_markdown(const std::vector<std::vector<std::string>>& measures,
                              const std::vector<ConditionResult>& conditions, const std::vector<ReportMetric>& metrics) {
  std::string out = "\n| metric | current | candidate | candidate / current |\n|---|---|---|---|\n";
  for (const auto& row : measures) out += "| " + row[0] + " | " + row[1] + " | " + row[2] + " | " + row[3] + " |\n";
  if (conditions.empty()) return out;
  out += "\n## Stop conditions (candidate)\n\n| condition | candidate | met |\n|---|---|---|\n";
  for (const ConditionResult& r : conditions)
    out += "| `" + r.condition.text + "` | " + metric_text(r.value, find_metric(metrics, r.condition.metric)->kind) +
           " | " + (r.met ? "yes" : "**no**") + " |\n";
  return out;
}

std::string measures_html(const std::vector<std::vector<std::string>>& measures,
                          const std::vector<ConditionResult>& conditions, const std::vector<ReportMetric>& metrics) {
  std::string out = "<h2>Measures</h2>\n<table><tr><th>metric</th><th>current</th><th>candidate</th>"
                    "<th>candidate / current</th></tr>\n";
  for (const auto& cells : measures) {
    out += "<tr>";
    for (const std::string& cell : cells) out += "<td>" + html_escape(cell) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (conditions.empty()) return out;
  out += "<h2>Stop conditions (candidate)</h2>\n<table><tr><th>condition</th><th>candidate</th><th>met</th></tr>\n";
  for (const ConditionResult& r : conditions)
    out += "<tr><td><code>" + html_escape(r.condition.text) + "</code></td><td>" +
           html_escape(metric_text(r.value, find_metric(metrics, r.condition.metric)->kind)) + "</td><td>" +
           (r.met ? "yes" : "<strong>no</strong>") + "</td></tr>\n";
  return out + "</table>\n";
}

bool condition_holds(const StopCondition& condition, double candidate, std::optional<double> current) {
  if (!condition.relative) return holds(candidate, condition.op, condition.value);
  return current && holds(candidate, condition.op, condition.value * *current);
}

std::vector<std::string> report_metric_names() {
  std::vector<std::string> names;
  for (const ReportMetric& metric : bench_metrics()) names.push_back(metric.name);
  return names;
}

BenchMeasures read_bench_result(const std::string& path) {
  const Json json = read_json_file(path, ErrorKind::kUsage);
  BenchMeasures m;
  m.path = path;
  m.model = json.contains("model") && json["model"].is_string() ? json["model"].get<std::string>() : "?";
  // canrun bench --endpoint: a server's numbers, seen from its client.
  const bool server = json.contains("endpoint") && json["endpoint"].is_string();
  if (server) m.isa = json["endpoint"].get<std::string>();
  else if (json.contains("software_stack") && json["software_stack"].contains("isa"))
    m.isa = json["software_stack"]["isa"].get<std::string>();
  m.workload = json.contains("workload") ? json["workload"] : Json::object();
  m.throughput = number_at(json, path, "throughput_tokens_per_s");
  m.p50_ttft = number_at(json, path, "first_token_s.p50");
  m.p95_ttft = number_at(json, path, "first_token_s.p95");
  // A server's time per output token is per request ((latency - TTFT) / (tokens - 1)) as `vllm
  // bench serve` reports it; canrun's own bench times each token after the first.
  m.p50_tpot = number_at(json, path, server ? "tpot_s.p50" : "token_latency_s.p50");
  m.p95_tpot = number_at(json, path, server ? "tpot_s.p95" : "token_latency_s.p95");
  const double requests = number_at(json, path, "workload.requests");
  m.failure_rate = requests > 0 ? number_at(json, path, "failures") / requests : 0;
  if (!server) {
    m.prefill_tps = number_at(json, path, "prefill_tokens_per_s");
    m.decode_tps = number_at(json, path, "decode_tokens_per_s");
    m.load_time = number_at(json, path, "load_s");
    // Without a plan (ref, --no-compile) nothing is compiled.
    m.compile_time = json.contains("compile") && json["compile"].is_object() ? number_at(json, path, "compile.cold_s")
                                                                             : 0;
    m.peak_memory = number_at(json, path, "peak_rss_bytes");
  }
  m.price_per_hour = optional_number(json, "price_per_hour");
  m.cost_per_mtok = optional_number(json, "cost_per_million_generated_tokens");
  return m;
}

std::vector<StopCondition> parse_stop_conditions(const std::string& text, const std::vector<ReportMetric>& metrics) {
  std::vector<StopCondition> conditions;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    std::erase_if(item, [](unsigned char c) { return std::isspace(c); });
    start = comma + 1;
    if (item.empty()) {
      if (comma == text.size()) break;
      fail(ErrorKind::kUsage, "--stop '" + text + "': an empty condition between commas");
    }
    const size_t op_at = item.find_first_of("<>");
    if (op_at == std::string::npos || op_at == 0)
      fail(ErrorKind::kUsage, "--stop '" + item + "': expected METRIC<VALUE, METRIC<=VALUE, METRIC>VALUE or "
                                                  "METRIC>=VALUE");
    StopCondition condition;
    condition.text = item;
    condition.metric = item.substr(0, op_at);
    condition.op = item.substr(op_at, item.compare(op_at + 1, 1, "=") == 0 ? 2 : 1);
    const ReportMetric* metric = find_metric(metrics, condition.metric);
    if (!metric) {
      std::string known;
      for (const ReportMetric& known_metric : metrics) known += (known.empty() ? "" : ", ") + known_metric.name;
      fail(ErrorKind::kUsage,
           "--stop '" + item + "': unknown metric '" + condition.metric + "' (known: " + known + ")");
    }
    const std::string value = item.substr(op_at + condition.op.size());
    condition.value = parse_value(value, *metric, item);
    condition.relative = value.ends_with("x");
    conditions.push_back(condition);
  }
  return conditions;
}

std::optional<double> metric_value(const BenchMeasures& m, const std::string& metric, double traffic_mtok) {
  // A server's own start-up is not seen from its client: nothing to amortise is known.
  const std::optional<double> setup =
      m.load_time && m.compile_time ? std::optional<double>(*m.load_time + *m.compile_time) : std::nullopt;
  const double serving = m.throughput > 0 ? traffic_mtok * 1e6 / m.throughput : 0;
  const std::map<std::string, std::function<std::optional<double>()>> values = {
      {"throughput", [&] { return m.throughput; }},
      {"prefill_tps", [&] { return m.prefill_tps; }},
      {"decode_tps", [&] { return m.decode_tps; }},
      {"p50_ttft", [&] { return m.p50_ttft; }},
      {"p95_ttft", [&] { return m.p95_ttft; }},
      {"p50_tpot", [&] { return m.p50_tpot; }},
      {"p95_tpot", [&] { return m.p95_tpot; }},
      {"failure_rate", [&] { return m.failure_rate; }},
      {"peak_memory", [&] { return m.peak_memory; }},
      {"load_time", [&] { return m.load_time; }},
      {"compile_time", [&] { return m.compile_time; }},
      {"setup_share", [&]() -> std::optional<double> {
         if (!setup || serving <= 0) return std::nullopt;
         return *setup / (*setup + serving);
       }},
      {"cost_per_mtok", [&] { return m.cost_per_mtok; }},
      {"amortised_cost_per_mtok", [&]() -> std::optional<double> {
         if (!setup || !m.price_per_hour || serving <= 0) return std::nullopt;
         return *m.price_per_hour / 3600 * (*setup + serving) / traffic_mtok;
       }},
  };
  return values.at(metric)();
}

bool MigrationReport::go() const {
  return std::all_of(conditions.begin(), conditions.end(), [](const ConditionResult& r) { return r.met; });
}

MigrationReport make_report(BenchMeasures current, BenchMeasures candidate, const ReportOptions& options) {
  if (!(options.traffic_mtok > 0)) fail(ErrorKind::kUsage, "--traffic-mtok must be positive");
  MigrationReport report{std::move(current), std::move(candidate), {}, {}, {}};
  for (const StopCondition& condition : options.stop) {
    ConditionResult result{condition, metric_value(report.candidate, condition.metric, options.traffic_mtok), false};
    result.met = result.value &&
                 condition_holds(condition, *result.value, metric_value(report.current, condition.metric, options.traffic_mtok));
    report.conditions.push_back(result);
  }
  const Json& a = report.current.workload;
  const Json& b = report.candidate.workload;
  for (const std::string key : {"prompt_tokens", "output_tokens", "requests", "concurrency", "kv_dtype"})
    if (a.value(key, Json()) != b.value(key, Json())) report.workload_differences.push_back(key);
  // A text-only workload (an endpoint's bench has none) has no image tokens.
  if (a.value("image_tokens", int64_t{0}) != b.value("image_tokens", int64_t{0}))
    report.workload_differences.push_back("image_tokens");
  return report;
}

std::string report_markdown(const MigrationReport& report, const ReportOptions& options) {
  std::string out = "# Migration report\n\n";
  out += "- Current: " + report.current.model + " (" + report.current.isa + "), " + workload_text(report.current) +
         ", from `" + report.current.path + "`\n";
  out += "- Candidate: " + report.candidate.model + " (" + report.candidate.isa + "), " +
         workload_text(report.candidate) + ", from `" + report.candidate.path + "`\n";
  out += "- Load and compile amortised over " + fixed(options.traffic_mtok, "%g") + " million generated tokens\n";
  if (!report.workload_differences.empty()) {
    std::string fields;
    for (const std::string& field : report.workload_differences) fields += (fields.empty() ? "" : ", ") + field;
    out += "- **The two runs' workloads differ** (" + fields + "): the comparison is not like for like\n";
  }
  out += measures_markdown(comparison_rows(report, options.traffic_mtok), report.conditions, bench_metrics());
  if (report.lab) {
    out += "\n## The lab's rows\n\n" + lab_summary(*report.lab) +
           ".\n\n| model | current | candidate | changes |\n|---|---|---|---|\n";
    for (const auto& row : lab_rows(*report.lab))
      out += "| " + row[0] + " | " + row[1] + " | " + row[2] + " | " + row[3] + " |\n";
  }
  out += "\n**" + verdict(report) + "**\n";
  return out;
}

std::string report_html(const MigrationReport& report, const ReportOptions& options) {
  std::string out =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Migration report</title>\n"
      "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}"
      "table{border-collapse:collapse}td,th{border-bottom:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"
      ".go{color:#116329}.nogo{color:#a40e26}</style></head><body>\n<h1>Migration report</h1>\n<ul>\n";
  out += "<li>Current: " + html_escape(report.current.model + " (" + report.current.isa + "), " +
                                       workload_text(report.current) + ", from " + report.current.path) + "</li>\n";
  out += "<li>Candidate: " + html_escape(report.candidate.model + " (" + report.candidate.isa + "), " +
                                         workload_text(report.candidate) + ", from " + report.candidate.path) +
         "</li>\n<li>Load and compile amortised over " + fixed(options.traffic_mtok, "%g") +
         " million generated tokens</li>\n";
  if (!report.workload_differences.empty())
    out += "<li><strong>The two runs' workloads differ: the comparison is not like for like.</strong></li>\n";
  out += "</ul>\n<p class=\"" + std::string(report.go() ? "go" : "nogo") + "\"><strong>" +
         html_escape(verdict(report)) +
         "</strong></p>\n";
  // Candidate / current per metric as bars around 1 (the current), better to the right in green.
  const std::vector<std::string> charted = {"throughput", "p95_ttft", "p95_tpot", "peak_memory", "cost_per_mtok"};
  std::string bars;
  int row = 0;
  for (const std::string& name : charted) {
    const std::optional<double> a = metric_value(report.current, name, options.traffic_mtok);
    const std::optional<double> b = metric_value(report.candidate, name, options.traffic_mtok);
    if (!a || !b || *a <= 0 || *b <= 0) continue;
    const ReportMetric& metric = *find_metric(name);
    const double gain = metric.lower_is_better ? *a / *b : *b / *a;  // > 1: the candidate is better
    const double width = std::min(150.0, std::abs(std::log2(gain)) * 50);
    const double y = 10 + row++ * 28;
    const double x = gain >= 1 ? 330 : 330 - width;
    bars += "<text x=\"0\" y=\"" + fixed(y + 14, "%.0f") + "\">" + html_escape(metric.name) + "</text>";
    bars += "<rect x=\"" + fixed(x, "%.1f") + "\" y=\"" + fixed(y, "%.0f") + "\" width=\"" + fixed(width, "%.1f") +
            "\" height=\"18\" fill=\"" + (gain >= 1 ? "#2da44e" : "#cf222e") + "\"/>";
    bars += "<text x=\"500\" y=\"" + fixed(y + 14, "%.0f") + "\">" + fixed(gain, "%.3g") + "x " +
            (gain >= 1 ? "better" : "worse") + "</text>";
  }
  if (row > 0)
    out += "<h2>Candidate against current</h2>\n<svg role=\"img\" aria-label=\"candidate relative to current\" "
           "width=\"620\" height=\"" + fixed(20 + row * 28, "%.0f") + "\" xmlns=\"http://www.w3.org/2000/svg\" "
           "font-size=\"13\"><line x1=\"330\" y1=\"0\" x2=\"330\" y2=\"" + fixed(20 + row * 28, "%.0f") +
           "\" stroke=\"#57606a\"/>" + bars + "</svg>\n<p>Bars: log scale, 1 (the current) at the line; each "
           "doubling is 50 pixels.</p>\n";
  out += measures_html(comparison_rows(report, options.traffic_mtok), report.conditions, bench_metrics());
  if (report.lab) {
    out += "<h2>The lab's rows</h2>\n<p>" + html_escape(lab_summary(*report.lab)) +
           ".</p>\n<table><tr><th>model</th><th>current</th><th>candidate</th><th>changes</th></tr>\n";
    for (const auto& cells : lab_rows(*report.lab)) {
      out += "<tr>";
      for (const std::string& cell : cells) out += "<td>" + html_escape(cell) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace canrun
