// The verification rules: token-exact, else vLLM's top-5 rule at the first differing position;
// and the traced generation the rule reads agrees with the engine's own greedy generation.
#include <gtest/gtest.h>

#include <filesystem>

#include "lab/verify.h"
#include "runtime/generate.h"
#include "runtime/loaded_model.h"

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

TEST(LabVerify, TopKBreaksTiesTowardsTheLowerIdAsArgmaxDoes) {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f, 3.0f, 0.5f};
  EXPECT_EQ(top_k_ids(logits, 5), (std::vector<int32_t>{4, 1, 2, 0, 5}));
  EXPECT_EQ(top_k_ids(logits, 10).size(), 6u);
  EXPECT_EQ(top_k_ids(logits, 1).front(), argmax(logits));
}

TEST(LabVerify, TracedGenerationMatchesGenerateGreedy) {
  const LoadedModel loaded =
      load_model((std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/qwen2").string());
  const std::vector<int32_t> prompt = {5, 17, 42, 100};
  GenerationOptions options;
  options.max_new_tokens = 12;
  options.eos_token_ids = loaded.generation.eos_token_ids;
  const GenerationResult expected = generate_greedy(*loaded.model, prompt, options);
  const GenerationTrace traced = generate_traced(*loaded.model, prompt, 12, loaded.generation.eos_token_ids);
  EXPECT_EQ(traced.tokens, expected.tokens);
  ASSERT_EQ(traced.top_ids.size(), traced.tokens.size());
  for (size_t i = 0; i < traced.tokens.size(); ++i) {
    EXPECT_EQ(traced.top_ids[i].size(), 5u);
    EXPECT_EQ(traced.top_ids[i].front(), traced.tokens[i]);
  }
}

}  // namespace
}  // namespace canrun
