// A bf16 or f16 KV cache (GenerateRequest::kv_dtype, --kv-dtype) against the f32 one, on both
// backends and the fixtures of every way attention fills its cache: plain and GQA (llama,
// qwen3), sliding windows with soft-capping (gemma2), latent attention (deepseek_v2) and sinks
// (gpt_oss). The cache takes half the bytes, and the logits after the prompt (whose attention
// reads the prompt's keys and values back from the cache) stay close: each cached value is
// rounded by at most half a bf16 (2^-9) or f16 (2^-12) step of itself. On these fixtures
// (random weights, logits spread over about 15) the largest logit difference measured was
// 1.1% of the logits' range for bf16 (llama_f32) and 0.10% for f16; the test allows 2.5% and
// 0.25%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/session.h"

namespace canrun {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models";

float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  return largest;
}

class KvCacheDtype : public testing::TestWithParam<std::tuple<Backend, std::string>> {};

TEST_P(KvCacheDtype, HalvesTheCacheAndKeepsTheLogitsClose) {
  const auto& [backend, name] = GetParam();
  Session session((kFixtures / name).string(), uncompiled(backend));
  const std::vector<int32_t> prompt = {1, 61, 51, 68, 30, 42, 77, 5};
  GenerateRequest request;
  request.max_new_tokens = 1;
  const GenerationResult f32 = session.generate(prompt, request);
  for (const DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    request.kv_dtype = dtype;
    const GenerationResult narrow = session.generate(prompt, request);
    EXPECT_EQ(narrow.kv_cache_bytes * 2, f32.kv_cache_bytes);
    ASSERT_EQ(narrow.prompt_logits.size(), f32.prompt_logits.size());
    const auto [low, high] = std::minmax_element(f32.prompt_logits.begin(), f32.prompt_logits.end());
    const float difference = largest_difference(narrow.prompt_logits, f32.prompt_logits);
    EXPECT_LT(difference, (dtype == DType::kBF16 ? 2.5e-2f : 2.5e-3f) * (*high - *low));
    EXPECT_GT(difference, 0.0f) << "the cache did not round anything";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KvCacheDtype,
                         testing::Combine(testing::Values(Backend::kRef, Backend::kCpu),
                                          testing::Values("llama_f32", "qwen3", "gemma2", "deepseek_v2", "gpt_oss")),
                         [](const testing::TestParamInfo<KvCacheDtype::ParamType>& info) {
                           return std::string(std::get<0>(info.param) == Backend::kRef ? "ref" : "cpu") + "_" +
                                  std::get<1>(info.param);
                         });

}  // namespace
}  // namespace canrun
