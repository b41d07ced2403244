// Statuses: names round-trip, each has a meaning, failures map by stage, child exits map to
// TIMEOUT / OOM / FAIL_RUNTIME, and the dataset card documents every status and column.
#include <gtest/gtest.h>

#include <signal.h>

#include <set>

#include "lab/dataset.h"
#include "lab/dataset_card.h"
#include "lab/status.h"
#include "lab/sweep.h"

namespace canrun {
namespace {

TEST(LabStatus, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (const StatusInfo& info : all_statuses()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(parse_status(info.name), info.status);
    EXPECT_EQ(status_name(info.status), info.name);
    EXPECT_FALSE(info.meaning.empty()) << info.name;
  }
  EXPECT_EQ(names.size(), 13u);
  EXPECT_FALSE(parse_status("pass").has_value());
}

TEST(LabStatus, FailuresMapByStage) {
  EXPECT_EQ(status_for_error(CheckStage::kLoad, ErrorKind::kCheckpoint), Status::kFailLoad);
  EXPECT_EQ(status_for_error(CheckStage::kLoad, ErrorKind::kTokenizer), Status::kFailLoad);
  EXPECT_EQ(status_for_error(CheckStage::kLoad, ErrorKind::kUnsupportedArchitecture), Status::kUnsupportedArchitecture);
  EXPECT_EQ(status_for_error(CheckStage::kCompile, ErrorKind::kRuntime), Status::kFailCompile);
  EXPECT_EQ(status_for_error(CheckStage::kGenerate, ErrorKind::kUsage), Status::kFailRuntime);
  EXPECT_EQ(status_for_error(CheckStage::kGenerate, ErrorKind::kRuntime), Status::kFailRuntime);
}

TEST(LabStatus, ChildExitsMapToStatuses) {
  ChildOutcome timed_out;
  timed_out.timed_out = true;
  timed_out.signal = SIGKILL;
  EXPECT_EQ(classify_child_exit(timed_out, 5).status, Status::kTimeout);
  EXPECT_NE(classify_child_exit(timed_out, 5).error_message.find("5 s"), std::string::npos);

  ChildOutcome crashed;
  crashed.signal = SIGSEGV;
  const ChildVerdict crash = classify_child_exit(crashed, 5);
  EXPECT_EQ(crash.status, Status::kFailRuntime);
  EXPECT_NE(crash.error_message.find("SIGSEGV"), std::string::npos) << crash.error_message;

  ChildOutcome killed;  // a SIGKILL the sweep did not send
  killed.signal = SIGKILL;
  EXPECT_EQ(classify_child_exit(killed, 5).status, Status::kOom);

  ChildOutcome escaped;  // an uncaught bad_alloc aborts
  escaped.signal = SIGABRT;
  escaped.err = "terminate called after throwing an instance of 'std::bad_alloc'\n";
  EXPECT_EQ(classify_child_exit(escaped, 5).status, Status::kOom);

  ChildOutcome failed;
  failed.exit_code = 2;
  failed.err = "error: MODEL 'x': not a folder\n";
  const ChildVerdict exit = classify_child_exit(failed, 5);
  EXPECT_EQ(exit.status, Status::kFailRuntime);
  EXPECT_NE(exit.error_message.find("code 2: error: MODEL 'x'"), std::string::npos) << exit.error_message;
}

TEST(LabDatasetCard, DocumentsEveryStatusColumnAndFile) {
  const std::string card =
      dataset_card({{"canrun-0.1.0__ref-x86_64", {"canrun-0.1.0__ref-x86_64.parquet", "canrun-0.1.0__ref-x86_64/*.parquet"}, ""}});
  EXPECT_TRUE(card.starts_with("---\nlicense: "));
  EXPECT_NE(card.find("- config_name: canrun-0.1.0__ref-x86_64\n  data_files:\n  - canrun-0.1.0__ref-x86_64.parquet\n"
                      "  - canrun-0.1.0__ref-x86_64/*.parquet\n"),
            std::string::npos);
  for (const StatusInfo& info : all_statuses())
    EXPECT_NE(card.find("| `" + std::string(info.name) + "` |"), std::string::npos) << info.name;
  for (const std::string& column : dataset_columns())
    EXPECT_NE(card.find("| `" + column + "` |"), std::string::npos) << column;
  EXPECT_NE(card.find("nothing about throughput"), std::string::npos);
  EXPECT_THROW(column_description("no_such_column"), Error);
}

}  // namespace
}  // namespace canrun
