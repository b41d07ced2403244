// The judge deciding a FAIL_MISMATCH row of real weights (a sharded or bfloat16 run): fluent text
// becomes PASS_JUDGE, garbled text FAIL_JUDGE, each with its score and the judge's description;
// synthetic weights and other results are left alone, and without the judge's model the row
// says why no judge ran. The judge model is the real SmolLM2 folder (tools/fetch_smollm2.sh).
#include <gtest/gtest.h>

#include <cstdlib>

#include "lab/check.h"
#include "lab/judge.h"
#include "lab/status.h"

namespace canrun {
namespace {

ResultRow mismatch(const std::string& text, const std::string& weights = "real") {
  ResultRow row;
  row.result = "FAIL_MISMATCH";
  row.error_type = "mismatch";
  row.error_message = "token 3 differs";
  row.weights = weights;
  row.generated_text = text;
  row.verification = "top-5";
  return row;
}

TEST(LabJudge, DecidesAMismatchOfRealWeightsByTheText) {
  ResultRow fluent = mismatch(" Paris, the largest city of France and its capital.");
  judge_mismatch(fluent);
  EXPECT_EQ(fluent.result, "PASS_JUDGE");
  EXPECT_EQ(fluent.verification, "judge");
  ASSERT_TRUE(fluent.judge_score);
  EXPECT_GE(*fluent.judge_score, kJudgeThreshold);
  EXPECT_EQ(fluent.judge, judge_description());
  EXPECT_FALSE(fluent.error_type);
  EXPECT_NE(fluent.error_message->find("token 3 differs; the judge scores the text"), std::string::npos);

  ResultRow garbled = mismatch(" lar cit Fra the Pa ofris gest wahowen");
  judge_mismatch(garbled);
  EXPECT_EQ(garbled.result, "FAIL_JUDGE");
  EXPECT_EQ(garbled.error_type, "judge");
  EXPECT_LT(*garbled.judge_score, kJudgeThreshold);
}

TEST(LabJudge, LeavesOtherRowsAlone) {
  ResultRow synthetic = mismatch(" Paris.", "synthetic");
  judge_mismatch(synthetic);
  EXPECT_EQ(synthetic.result, "FAIL_MISMATCH");
  EXPECT_FALSE(synthetic.judge_score);
  ResultRow passed = mismatch(" Paris.");
  passed.result = "PASS_TOP5";
  judge_mismatch(passed);
  EXPECT_EQ(passed.result, "PASS_TOP5");
}

TEST(LabJudge, SaysWhyNoJudgeRanWithoutItsModel) {
  setenv("CANRUN_JUDGE_MODEL", "/nonexistent/judge", 1);
  ResultRow row = mismatch(" Paris.");
  judge_mismatch(row);
  unsetenv("CANRUN_JUDGE_MODEL");
  EXPECT_EQ(row.result, "FAIL_MISMATCH");
  EXPECT_NE(row.error_message->find("no judge ran: "), std::string::npos);
  EXPECT_NE(row.error_message->find("/nonexistent/judge"), std::string::npos);
  EXPECT_FALSE(row.judge_score);
}

}  // namespace
}  // namespace canrun
