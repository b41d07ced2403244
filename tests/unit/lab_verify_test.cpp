// The verification rules: token-exact, else vLLM's top-5 rule at the first differing position.
#include <gtest/gtest.h>

#include "lab/verify.h"

namespace canrun {
namespace {

GenerationTrace trace(std::vector<int32_t> tokens, std::vector<std::vector<int32_t>> top) {
  return {std::move(tokens), std::move(top)};
}

const std::vector<int32_t> kAny = {90, 91, 92, 93, 94};

TEST(LabVerify, EqualSequencesPass) {
  const auto a = trace({1, 2, 3}, {kAny, kAny, kAny});
  const Verdict verdict = compare_generations(a, a);
  EXPECT_EQ(verdict.status, Status::kPass);
  EXPECT_EQ(verdict.matching_prefix_length, 3);
}

TEST(LabVerify, DivergenceWithinEachOthersTop5PassesTop5) {
  const auto tested = trace({1, 2, 7, 8}, {kAny, kAny, {7, 3, 10, 11, 12}, kAny});
  const auto reference = trace({1, 2, 3, 4}, {kAny, kAny, {3, 20, 21, 7, 22}, kAny});
  const Verdict verdict = compare_generations(tested, reference);
  EXPECT_EQ(verdict.status, Status::kPassTop5);
  EXPECT_EQ(verdict.matching_prefix_length, 2);
  EXPECT_NE(verdict.detail.find("position 2"), std::string::npos) << verdict.detail;
}

TEST(LabVerify, TestedTokenOutsideReferenceTop5Fails) {
  const auto tested = trace({7}, {{7, 3, 10, 11, 12}});
  const auto reference = trace({3}, {{3, 20, 21, 22, 23}});
  EXPECT_EQ(compare_generations(tested, reference).status, Status::kFailMismatch);
}

TEST(LabVerify, ReferenceTokenOutsideTestedTop5Fails) {
  // The rule is symmetric: each side's token must be in the other's top-5.
  const auto tested = trace({7}, {{7, 10, 11, 12, 13}});
  const auto reference = trace({3}, {{3, 7, 21, 22, 23}});
  const Verdict verdict = compare_generations(tested, reference);
  EXPECT_EQ(verdict.status, Status::kFailMismatch);
  EXPECT_EQ(verdict.matching_prefix_length, 0);
}

TEST(LabVerify, OneSideStoppingEarlierFails) {
  const Verdict verdict = compare_generations(trace({1, 2}, {kAny, kAny}), trace({1, 2, 3}, {kAny, kAny, kAny}));
  EXPECT_EQ(verdict.status, Status::kFailMismatch);
  EXPECT_EQ(verdict.matching_prefix_length, 2);
}

}  // namespace
}  // namespace canrun
