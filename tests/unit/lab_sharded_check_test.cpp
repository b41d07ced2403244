// Reading back what the workers of a sharded check wrote: a worker's own failure becomes the
// row's, and a report that cannot be read is a failed run, never a lost check.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "lab/sharded_check.h"
#include "lab/tested_run.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

void write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

Json rank0_report() {
  TestedRun run;
  run.load_time_s = 1.5;
  return Json{{"run", tested_run_to_json(run)}, {"peak_resident_bytes", 1000}};
}

TEST(WorkerReports, RankZeroRunAndLargestPeakWithoutFailure) {
  const TemporaryDirectory dir("canrun-reports-");
  write(dir.path() / "rank0.json", rank0_report().dump());
  write(dir.path() / "rank1.json", Json{{"peak_resident_bytes", 3000}}.dump());
  const ShardedTestedRun sharded = read_worker_reports(dir.path().string(), 2);
  EXPECT_FALSE(sharded.failure);
  EXPECT_EQ(sharded.run.load_time_s, 1.5);
  EXPECT_EQ(sharded.peak_worker_bytes, 3000);
}

TEST(WorkerReports, AWorkersFailureNamesItsRank) {
  const TemporaryDirectory dir("canrun-reports-");
  write(dir.path() / "rank0.json", rank0_report().dump());
  const Json failed{{"failure", {{"result", "FAIL_COMPILE"}, {"error_type", "io"}, {"error_message", "disk full"}}},
                    {"peak_resident_bytes", 10}};
  write(dir.path() / "rank1.json", failed.dump());
  const ShardedTestedRun sharded = read_worker_reports(dir.path().string(), 2);
  ASSERT_TRUE(sharded.failure);
  EXPECT_EQ(sharded.failure->status, Status::kFailCompile);
  EXPECT_EQ(sharded.failure->type, "io");
  EXPECT_EQ(sharded.failure->message, "rank 1 of 2: disk full");
  EXPECT_EQ(sharded.run.load_time_s, 1.5);  // rank 0's measurements are kept
}

TEST(WorkerReports, AnUnreadableReportIsARuntimeFailureNamingTheRank) {
  for (const std::string bad : {"{\"peak_resident_bytes\": 5", "{\"run\": {\"load_time_s\": \"slow\"}}"}) {
    const TemporaryDirectory dir("canrun-reports-");
    write(dir.path() / "rank0.json", bad);
    const ShardedTestedRun sharded = read_worker_reports(dir.path().string(), 2);
    ASSERT_TRUE(sharded.failure) << bad;
    EXPECT_EQ(sharded.failure->status, Status::kFailRuntime);
    EXPECT_EQ(sharded.failure->type, "workers_failed");
    EXPECT_NE(sharded.failure->message.find("rank 0 of 2 left a report that cannot be read"), std::string::npos)
        << sharded.failure->message;
  }
}

}  // namespace
}  // namespace canrun
