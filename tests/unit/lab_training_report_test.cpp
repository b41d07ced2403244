// The training report: its measures from two training checks' rows (time to the reference's
// final loss, the final loss's difference, cost per 1,000 steps), relative stop conditions, the
// verdict and both formats; rows that are not training checks are refused by name.
#include <gtest/gtest.h>

#include <fstream>

#include "lab/training_report.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

Json training_row(std::vector<double> losses, std::vector<double> times, double p50) {
  return {{"workload", "train"},
          {"model_id", "org/model"},
          {"result", "PASS"},
          {"compiler_version", "torch-2.15.0+eager-cpu"},
          {"library_version", "transformers-5.23.0"},
          {"software_stack", {{{"component", "dtype"}, {"version", "float32"}}}},
          {"train_losses", losses},
          {"reference_losses", {3.0, 2.5, 2.0, 1.5}},
          {"step_times_s", times},
          {"step_time_p50_s", p50},
          {"first_step_time_s", times.front()},
          {"train_tokens_per_s", 100 / p50},
          {"peak_host_memory_bytes", 2e9}};
}

class TrainingReportTest : public testing::Test {
 protected:
  std::string write(const std::string& name, const Json& row) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << row.dump();
    return path;
  }
  TemporaryDirectory dir_{"training-report-test-"};
};

TEST_F(TrainingReportTest, MeasuresTimeToTheReferencesLossLossDeltaAndCost) {
  const TrainingMeasures current =
      read_training_result(write("a.json", training_row({3.0, 2.5, 2.0, 1.5}, {5, 1, 1, 1}, 1.0)), 3.6);
  // The candidate reaches the reference's final 1.5 at step 2, after 2 + 0.5 + 0.5 s.
  const TrainingMeasures candidate =
      read_training_result(write("b.json", training_row({3.0, 2.4, 1.5, 1.53}, {2, 0.5, 0.5, 0.5}, 0.5)), 7.2);
  EXPECT_DOUBLE_EQ(*training_metric_value(current, current, "time_to_loss"), 8.0);
  EXPECT_DOUBLE_EQ(*training_metric_value(candidate, current, "time_to_loss"), 3.0);
  EXPECT_NEAR(*training_metric_value(candidate, current, "loss_delta"), 0.02, 1e-12);
  // $7.2 an hour, 0.5 s a step: $1 per 1,000 steps; $1 for the current too.
  EXPECT_NEAR(*training_metric_value(candidate, current, "cost_per_1k_steps"), 1.0, 1e-12);
  EXPECT_NEAR(*training_metric_value(current, current, "cost_per_1k_steps"), 1.0, 1e-12);
  EXPECT_EQ(training_metric_value(candidate, current, "peak_memory"), 2e9);

  TrainingReport report = make_training_report(
      current, candidate, parse_stop_conditions("step_time<0.8x,loss_delta<5%,time_to_loss<4s", training_metrics()));
  EXPECT_TRUE(report.go());
  const std::string markdown = training_report_markdown(report);
  EXPECT_NE(markdown.find("GO: every stop condition holds"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| time per step, p50 of the steps after the first (step_time) | 1 s | 500 ms | 0.5x |"),
            std::string::npos)
      << markdown;
  report = make_training_report(current, candidate, parse_stop_conditions("loss_delta<1%", training_metrics()));
  EXPECT_FALSE(report.go());
  EXPECT_NE(training_report_markdown(report).find("NO-GO: loss_delta<1% (candidate: 2%)"), std::string::npos);
  const std::string html = training_report_html(report);
  EXPECT_NE(html.find("<svg role=\"img\" aria-label=\"loss per step\""), std::string::npos);
  EXPECT_NE(html.find("class=\"nogo\""), std::string::npos);
}

TEST_F(TrainingReportTest, ALossNeverReachedAndAMissingPriceAreNotMeasured) {
  const TrainingMeasures slow =
      read_training_result(write("a.json", training_row({3.0, 2.9, 2.8, 2.7}, {1, 1, 1, 1}, 1.0)), std::nullopt);
  EXPECT_FALSE(training_metric_value(slow, slow, "time_to_loss"));
  EXPECT_FALSE(training_metric_value(slow, slow, "cost_per_1k_steps"));
  const TrainingReport report =
      make_training_report(slow, slow, parse_stop_conditions("time_to_loss<1min", training_metrics()));
  EXPECT_FALSE(report.go());
}

TEST_F(TrainingReportTest, RowsThatAreNotTrainingChecksAreRefusedByName) {
  Json inference = training_row({1.0}, {1.0}, 1.0);
  inference["workload"] = "inference";
  Json failed = training_row({1.0}, {1.0}, 1.0);
  failed["train_losses"] = nullptr;
  failed["result"] = "FAIL_RUNTIME";
  for (const auto& [row, message] : std::vector<std::pair<Json, std::string>>{
           {inference, "not a training check's row"}, {failed, "field 'train_losses' is missing or empty"}}) {
    try {
      read_training_result(write("x.json", row), std::nullopt);
      ADD_FAILURE() << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_stop_conditions("throughput>1", training_metrics()), Error);
}

}  // namespace
}  // namespace canrun
