// Speculative decoding by prompt lookup: the drafts it takes from the sequence, and generation
// with it choosing, on every committed tiny checkpoint, the tokens plain decoding chooses (greedy,
// and sampled from the same seed), uncompiled on ref and compiled on cpu; models whose state
// folds tokens in are refused by name.
#include "runtime/prompt_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "golden_fixtures.h"
#include "runtime/session.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceDir = CANRUN_SOURCE_DIR;

TEST(PromptLookupDraft, TakesWhatFollowedTheLatestOccurrenceOfTheLongestSuffix) {
  // The suffix "7 8" occurred twice before; the latest occurrence is followed by 5 6.
  const std::vector<int32_t> ids{7, 8, 1, 2, 3, 7, 8, 5, 6, 9, 7, 8};
  EXPECT_EQ(prompt_lookup_draft(ids, 3, 4), (std::vector<int32_t>{5, 6, 9, 7}));
  EXPECT_EQ(prompt_lookup_draft(ids, 3, 2), (std::vector<int32_t>{5, 6}));
  // "9 7 8" occurs nowhere else, "7 8" does: the longest suffix that occurs wins.
  EXPECT_EQ(prompt_lookup_draft(ids, 2, 1), (std::vector<int32_t>{5}));
}

TEST(PromptLookupDraft, FallsBackToShorterSuffixesAndStopsAtTheEnd) {
  // "4 3" never occurred before; "3" did, followed by 1 2 and the end.
  EXPECT_EQ(prompt_lookup_draft(std::vector<int32_t>{3, 1, 2, 4, 3}, 3, 8), (std::vector<int32_t>{1, 2, 4, 3}));
  // An occurrence at the very end has nothing after it.
  EXPECT_TRUE(prompt_lookup_draft(std::vector<int32_t>{1, 2, 3}, 2, 4).empty());
  EXPECT_TRUE(prompt_lookup_draft(std::vector<int32_t>{5}, 2, 4).empty());
  EXPECT_TRUE(prompt_lookup_draft(std::vector<int32_t>{5, 5, 5}, 2, 0).empty());
  // Overlapping occurrences count: after 5 5 5, "5 5" first occurred at 0, followed by 5.
  EXPECT_EQ(prompt_lookup_draft(std::vector<int32_t>{5, 5, 5}, 2, 4), (std::vector<int32_t>{5}));
}

class PromptLookupDecoding : public testing::TestWithParam<std::tuple<bool, std::string>> {};

TEST_P(PromptLookupDecoding, ChoosesWhatPlainDecodingChooses) {
  const auto& [compiled, name] = GetParam();
  SessionOptions options = uncompiled(compiled ? Backend::kCpu : Backend::kRef);
  if (compiled) {
    options.compile = CompileOptions{};
    options.compile->use_cache = false;  // nothing written outside the test
    options.compile->buckets = {16, 128};
  }
  Session session((kSourceDir / "tests/fixtures/models" / name).string(), options);
  const Json golden =
      read_json_file((kSourceDir / "tests/goldens/models" / (name + ".json")).string(), ErrorKind::kIo);
  int64_t drafted = 0, accepted = 0;
  for (const Json& c : golden["cases"]) {
    // The prompt's first ids twice over, so that its end occurred before and the first step has
    // a draft.
    std::vector<int32_t> prompt = c["prompt_ids"].get<std::vector<int32_t>>();
    prompt.resize(std::min<size_t>(prompt.size(), 10));
    prompt.insert(prompt.end(), prompt.begin(), prompt.end());
    for (const bool sampled : {false, true}) {
      GenerateRequest plain;
      plain.max_new_tokens = 20;
      plain.eos_token_ids = std::vector<int32_t>{};
      plain.sampling.do_sample = sampled;
      plain.sampling.seed = 7;
      GenerateRequest speculative = plain;
      speculative.prompt_lookup = {4, 2};
      const std::vector<int32_t> expected = session.generate(prompt, plain).tokens;
      std::unique_ptr<SequenceRun> run;
      try {
        run = session.start(prompt, speculative);
      } catch (const Error& error) {
        // A recurrent or convolution state: refused, naming the option and the state.
        EXPECT_EQ(error.kind(), ErrorKind::kUsage);
        EXPECT_NE(std::string(error.what()).find("--prompt-lookup: "), std::string::npos) << error.what();
        return;
      }
      while (!run->ended()) session.step(*run);
      EXPECT_EQ(run->result().tokens, expected) << (sampled ? "sampled" : "greedy");
      drafted += run->result().drafted_tokens;
      accepted += run->result().accepted_tokens;
      EXPECT_LE(run->result().accepted_tokens, run->result().drafted_tokens);
    }
  }
  EXPECT_GT(drafted, 0);
  RecordProperty("drafted", std::to_string(drafted));
  RecordProperty("accepted", std::to_string(accepted));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PromptLookupDecoding,
                         testing::Combine(testing::Bool(), testing::ValuesIn(golden_fixture_names())),
                         [](const testing::TestParamInfo<PromptLookupDecoding::ParamType>& info) {
                           return std::string(std::get<0>(info.param) ? "cpu_compiled_" : "ref_") +
                                  std::get<1>(info.param);
                         });

}  // namespace
}  // namespace canrun
