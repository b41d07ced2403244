// Sequences decoded together (Session::step_batch) choose the same greedy tokens as each alone,
// on every committed tiny checkpoint, uncompiled on ref and compiled on cpu, with sequences
// joining between steps, some with their prompts in pieces between the others' steps (chunked
// prefill), and leaving at different lengths (continuous batching).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "golden_fixtures.h"
#include "runtime/session.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceDir = CANRUN_SOURCE_DIR;

class DecodeBatch : public testing::TestWithParam<std::tuple<bool, std::string>> {};

TEST_P(DecodeBatch, SequencesTogetherChooseWhatEachChoosesAlone) {
  const auto& [compiled, name] = GetParam();
  SessionOptions options = uncompiled(compiled ? Backend::kCpu : Backend::kRef);
  if (compiled) {
    options.compile = CompileOptions{};
    options.compile->use_cache = false;  // nothing written outside the test
    options.compile->buckets = {4, 8, 16, 128};
  }
  Session session((kSourceDir / "tests/fixtures/models" / name).string(), options);
  const Json golden =
      read_json_file((kSourceDir / "tests/goldens/models" / (name + ".json")).string(), ErrorKind::kIo);
  std::vector<std::vector<int32_t>> prompts;
  for (const Json& c : golden["cases"]) prompts.push_back(c["prompt_ids"].get<std::vector<int32_t>>());
  const auto request_for = [](size_t i) {
    GenerateRequest request;
    request.max_new_tokens = 9 - static_cast<int64_t>(i % 3) * 2;  // 9, 7, 5: they leave at different steps
    request.eos_token_ids = std::vector<int32_t>{};
    return request;
  };
  std::vector<std::vector<int32_t>> alone;
  for (size_t i = 0; i < prompts.size(); ++i) alone.push_back(session.generate(prompts[i], request_for(i)).tokens);
  // Together, every other prompt runs in pieces of 2 and 3 tokens (a lone last token joins the
  // piece before it).
  const auto chunked_request_for = [&](size_t i) {
    GenerateRequest request = request_for(i);
    request.prefill_chunk = static_cast<int64_t>(i % 2) * (2 + static_cast<int64_t>(i / 2) % 2);
    return request;
  };

  // One more sequence joins after each step.
  std::vector<std::unique_ptr<SequenceRun>> runs;
  for (size_t joined = 0; joined < prompts.size() || std::any_of(runs.begin(), runs.end(), [](const auto& r) {
                                                       return !r->ended();
                                                     });) {
    if (joined < prompts.size()) {
      runs.push_back(session.start(prompts[joined], chunked_request_for(joined)));
      ++joined;
    }
    std::vector<SequenceRun*> active;
    for (const auto& run : runs)
      if (!run->ended()) active.push_back(run.get());
    if (!active.empty()) session.step_batch(active);
  }
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(runs[i]->result().tokens, alone[i]) << "prompt " << i;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeBatch, testing::Combine(testing::Bool(), testing::ValuesIn(golden_fixture_names())),
                         [](const testing::TestParamInfo<DecodeBatch::ParamType>& info) {
                           return std::string(std::get<0>(info.param) ? "cpu_compiled_" : "ref_") +
                                  std::get<1>(info.param);
                         });

}  // namespace
}  // namespace canrun
