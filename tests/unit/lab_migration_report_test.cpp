// The migration report: stop conditions as written (units, operators, errors), the measures a
// condition reads (amortised cost included), the verdict, and both formats.
#include <gtest/gtest.h>

#include "lab/migration_report.h"
#include "serve_test_data.h"
#include "util/error.h"

namespace canrun {
namespace {

BenchMeasures measures(double throughput, double p95_ttft, std::optional<double> price) {
  BenchMeasures m;
  m.path = "run.json";
  m.model = "org/model";
  m.isa = "x86_64-avx2-fma";
  m.workload = {{"prompt_tokens", "128"}, {"output_tokens", "32"}, {"requests", 5}, {"concurrency", 1}};
  m.throughput = throughput;
  m.p95_ttft = p95_ttft;
  m.load_time = 100;
  m.compile_time = 260;
  m.peak_memory = 2e9;
  m.price_per_hour = price;
  if (price) m.cost_per_mtok = *price / 3600 * 1e6 / throughput;
  return m;
}

TEST(MigrationReport, StopConditionsReadUnitsAndOperators) {
  const std::vector<StopCondition> stop =
      parse_stop_conditions("p95_ttft<800ms, failure_rate<=0.5%,cost_per_mtok<$0.40,throughput>=50,peak_memory<2GiB");
  ASSERT_EQ(stop.size(), 5u);
  EXPECT_EQ(stop[0].metric, "p95_ttft");
  EXPECT_EQ(stop[0].op, "<");
  EXPECT_DOUBLE_EQ(stop[0].value, 0.8);
  EXPECT_EQ(stop[1].op, "<=");
  EXPECT_DOUBLE_EQ(stop[1].value, 0.005);
  EXPECT_DOUBLE_EQ(stop[2].value, 0.40);
  EXPECT_EQ(stop[3].op, ">=");
  EXPECT_DOUBLE_EQ(stop[4].value, 2.0 * 1024 * 1024 * 1024);
  EXPECT_TRUE(parse_stop_conditions("").empty());
  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"p95_tttf<1s", "unknown metric 'p95_tttf' (known: throughput,"},
           {"p95_ttft<1GB", "p95_ttft takes the units ms, s, us, min or x (a multiple of the current's), not 'GB'"},
           {"p95_ttft=1s", "expected METRIC<VALUE"},
           {"throughput>fast", "'fast' is not a number with a unit"},
           {"throughput>1,,p95_ttft<1s", "an empty condition between commas"}}) {
    try {
      parse_stop_conditions(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// "0.8x": a multiple of the current's value.
TEST(MigrationReport, RelativeConditionsCompareWithTheCurrent) {
  const std::vector<StopCondition> stop = parse_stop_conditions("p95_ttft<0.8x,throughput>=1.5x");
  ASSERT_EQ(stop.size(), 2u);
  EXPECT_TRUE(stop[0].relative);
  EXPECT_DOUBLE_EQ(stop[0].value, 0.8);
  ReportOptions options;
  options.stop = stop;
  // Candidate 0.3 s against 0.5 s (0.6x) and 160 against 100 tokens/s (1.6x): both hold.
  EXPECT_TRUE(make_report(measures(100, 0.5, std::nullopt), measures(160, 0.3, std::nullopt), options).go());
  const MigrationReport slower = make_report(measures(100, 0.5, std::nullopt), measures(160, 0.45, std::nullopt), options);
  EXPECT_FALSE(slower.go());
  EXPECT_FALSE(slower.conditions[0].met);
  EXPECT_FALSE(condition_holds(stop[0], 0.1, std::nullopt));  // nothing to compare with
}

TEST(MigrationReport, LoadAndCompileAreAmortisedOverTheTraffic) {
  // 100 tokens/s at $3.6/hour: $10 per million while serving; 360 s of setup is $0.36, spread
  // over 1 or 10 million tokens.
  const BenchMeasures m = measures(100, 0.5, 3.6);
  EXPECT_NEAR(*metric_value(m, "cost_per_mtok", 1), 10.0, 1e-9);
  EXPECT_NEAR(*metric_value(m, "amortised_cost_per_mtok", 1), 10.36, 1e-9);
  EXPECT_NEAR(*metric_value(m, "amortised_cost_per_mtok", 10), 10.036, 1e-9);
  EXPECT_NEAR(*metric_value(m, "setup_share", 1), 360.0 / (360.0 + 10000.0), 1e-12);
  EXPECT_FALSE(metric_value(measures(100, 0.5, std::nullopt), "amortised_cost_per_mtok", 1).has_value());
}

TEST(MigrationReport, GoOnlyWhenEveryConditionHoldsAndMeasuredOnes) {
  ReportOptions options;
  options.stop = parse_stop_conditions("p95_ttft<800ms,throughput>=90");
  const BenchMeasures current = measures(80, 1.0, std::nullopt);
  EXPECT_TRUE(make_report(current, measures(100, 0.5, std::nullopt), options).go());
  const MigrationReport slow = make_report(current, measures(100, 0.9, std::nullopt), options);
  EXPECT_FALSE(slow.go());
  EXPECT_FALSE(slow.conditions[0].met);
  EXPECT_TRUE(slow.conditions[1].met);
  EXPECT_NE(report_markdown(slow, options).find("**NO-GO: p95_ttft<800ms (candidate: 900 ms)**"), std::string::npos);
  // A condition on what the candidate did not measure fails, saying so.
  options.stop = parse_stop_conditions("cost_per_mtok<0.4");
  const MigrationReport unpriced = make_report(current, measures(100, 0.5, std::nullopt), options);
  EXPECT_FALSE(unpriced.go());
  EXPECT_NE(report_markdown(unpriced, options).find("cost_per_mtok<0.4 (candidate: not measured)"), std::string::npos);
}

TEST(MigrationReport, BothFormatsCompareAndFlagDifferentWorkloads) {
  ReportOptions options;
  options.stop = parse_stop_conditions("throughput>=90");
  BenchMeasures candidate = measures(100, 0.5, 3.6);
  candidate.workload["concurrency"] = 8;
  const MigrationReport report = make_report(measures(50, 1.0, 3.6), candidate, options);
  EXPECT_EQ(report.workload_differences, std::vector<std::string>{"concurrency"});
  const std::string markdown = report_markdown(report, options);
  EXPECT_NE(markdown.find("| throughput (generated tokens/s) (throughput) | 50.0 | 100.0 | 2x |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("workloads differ** (concurrency)"), std::string::npos);
  EXPECT_NE(markdown.find("**GO: every stop condition holds for the candidate**"), std::string::npos);
  const std::string html = report_html(report, options);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("2x better"), std::string::npos);  // throughput, and p95 TTFT halved
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Images in one workload only: its prompts are not the other's. Absent counts as none.
  BenchMeasures with_images = measures(50, 1.0, 3.6);
  with_images.workload["image_tokens"] = 197;
  EXPECT_EQ(make_report(measures(50, 1.0, 3.6), with_images, options).workload_differences,
            std::vector<std::string>{"image_tokens"});
  with_images.workload["image_tokens"] = 0;
  EXPECT_TRUE(make_report(measures(50, 1.0, 3.6), with_images, options).workload_differences.empty());
}

TEST(MigrationReport, TheLabsRowsOfBothStacksComeBesideTheNumbers) {
  ReportOptions options;
  MigrationReport report = make_report(measures(50, 1.0, 3.6), measures(100, 0.5, 3.6), options);
  ResultRow broke = serve_test::row("org/b", "FAIL_RUNTIME", 1.0, 1);
  VersionDiff lab;
  lab.from.files = {DatasetFile{{}, "current.parquet", {}}};
  lab.to.files = {DatasetFile{{}, "candidate.parquet", {}}};
  lab.models = diff_rows({serve_test::row("org/a", "PASS", 1.0, 1), serve_test::row("org/b", "PASS", 1.0, 1)},
                         {serve_test::row("org/a", "PASS", 1.0, 1), broke}, {});
  report.lab = lab;
  const std::string markdown = report_markdown(report, options);
  EXPECT_NE(markdown.find("2 models in current.parquet (current) or candidate.parquet (candidate): 2 pass on the "
                          "current stack, 1 on the candidate, 1 on both; 1 regression;"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| org/b | PASS | FAIL_RUNTIME | newly failing: PASS -> FAIL_RUNTIME |"), std::string::npos);
  EXPECT_NE(markdown.find("| org/a | PASS | PASS | unchanged |"), std::string::npos);
  EXPECT_NE(report_html(report, options).find("<td>org/b</td><td>PASS</td><td>FAIL_RUNTIME</td>"), std::string::npos);
}

}  // namespace
}  // namespace canrun
