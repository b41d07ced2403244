// The cpu backend against ref on bf16 checkpoints of every fixture's architecture: synthetic
// weights (src/lab/synthetic_weights.h) written from the fixture's config.json. The committed
// fixtures are nearly all f32, and bf16 is where cpu keeps the weights as stored, so this is
// what covers its fused q/k/v and gate/up slices, Conv1D transposes, experts and tied heads.
// Both backends multiply by the same weight values; only the accumulation differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "lab/synthetic_weights.h"
#include "runtime/session.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceDir = CANRUN_SOURCE_DIR;

// Every fixture but the quantized ones: synthetic checkpoints are bf16 only (gpt_oss_mxfp4's
// architecture is covered through the unquantized gpt_oss fixture).
std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "tests/fixtures/models"))
    if (!read_json_file((entry.path() / "config.json").string(), ErrorKind::kIo).contains("quantization_config"))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class BackendParity : public testing::TestWithParam<std::string> {};

TEST_P(BackendParity, CpuMatchesRefOnBf16Weights) {
  const fs::path fixture = kSourceDir / "tests/fixtures/models" / GetParam();
  const Json config = read_json_file((fixture / "config.json").string(), ErrorKind::kIo);
  const fs::path dir = fs::path(testing::TempDir()) / ("canrun_bf16_" + GetParam());
  make_synthetic_checkpoint(config, kSyntheticSeed, dir.string());
  Session ref(dir.string(), uncompiled(Backend::kRef));
  Session cpu(dir.string(), uncompiled(Backend::kCpu));
  const std::vector<int32_t> prompt = {1, 5, 9, 14, 2, 7, 3};
  GenerateRequest request;
  request.max_new_tokens = 8;
  request.eos_token_ids = std::vector<int32_t>{};
  const GenerationResult expected = ref.generate(prompt, request);
  const GenerationResult actual = cpu.generate(prompt, request);
  EXPECT_EQ(actual.tokens, expected.tokens);
  // Measured: at most 2e-7 on logits up to 1.3 in magnitude.
  float max_diff = 0;
  for (size_t i = 0; i < expected.prompt_logits.size(); ++i)
    max_diff = std::max(max_diff, std::abs(actual.prompt_logits[i] - expected.prompt_logits[i]));
  EXPECT_LT(max_diff, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BackendParity, testing::ValuesIn(fixture_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace canrun
