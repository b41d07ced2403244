// Parity of the encoders with transformers' last hidden states in the committed goldens of
// tools/make_encoder_fixtures.py (the versions are recorded in each golden), on ref, cpu and
// compiled cpu, alone and in one unpadded batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/session.h"
#include "util/error.h"
#include "encoder_fixtures.h"
#include "util/json.h"

namespace canrun {
namespace {

using namespace encoder_fixtures;
namespace fs = std::filesystem;

class EncoderParity : public testing::TestWithParam<std::tuple<Engine, std::string>> {};

TEST_P(EncoderParity, HiddenStatesMatchTransformersAloneAndInOneBatch) {
  const auto& [engine, name] = GetParam();
  const Json recorded = golden(name);
  Session session(folder(name), options_for(engine));
  ASSERT_TRUE(session.encodes());
  const int64_t hidden = recorded["hidden_size"].get<int64_t>();
  std::vector<std::vector<int32_t>> ids;
  for (const Json& row : recorded["ids"]) ids.push_back(row.get<std::vector<int32_t>>());
  // Each input alone, then all at once (unpadded): the same rows.
  std::vector<EncoderInput> batch;
  for (const auto& row : ids) batch.push_back({row, {}});
  const std::vector<float> together = session.encode(batch);
  float worst = 0;
  size_t offset = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::vector<float> expected = recorded["hidden"][i].get<std::vector<float>>();
    const EncoderInput alone{ids[i], {}};
    const std::vector<float> got = session.encode({&alone, 1});
    ASSERT_EQ(got.size(), ids[i].size() * static_cast<size_t>(hidden));
    ASSERT_EQ(expected.size(), got.size());
    for (size_t j = 0; j < got.size(); ++j) {
      worst = std::max(worst, std::abs(got[j] - expected[j]));
      EXPECT_NEAR(together[offset + j], got[j], 1e-5f) << "input " << i << " value " << j;
    }
    offset += got.size();
  }
  EXPECT_EQ(offset, together.size());
  EXPECT_LT(worst, tolerance(engine));
  char measured[32];
  std::snprintf(measured, sizeof measured, "%.2g", worst);
  RecordProperty("max_hidden_diff", measured);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EncoderParity,
                         testing::Combine(testing::Values(Engine::kRef, Engine::kCpu, Engine::kCpuCompiled),
                                          testing::ValuesIn(kNames)),
                         [](const testing::TestParamInfo<EncoderParity::ParamType>& info) {
                           return engine_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

TEST(EncoderSession, AGeneratingModelRefusesToEncodeAndAnEncoderToGenerate) {
  Session decoder((fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/llama_f32").string(), uncompiled(Backend::kRef));
  const std::vector<int32_t> ids = {1, 2, 3};
  const EncoderInput input{ids, {}};
  EXPECT_THROW(decoder.encode({&input, 1}), Error);
  Session encoder(folder("bert_mean"), uncompiled(Backend::kRef));
  try {
    encoder.generate(ids, GenerateRequest{});
    FAIL() << "an encoder generated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is an encoder"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encoder.encode({}), Error);
}

TEST(EncoderSession, TokenTypesAddTheirEmbeddings) {
  Session session(folder("bert_mean"), uncompiled(Backend::kRef));
  const std::vector<int32_t> ids = {2, 10, 11, 3, 12, 3};
  const std::vector<int32_t> zeros(ids.size(), 0), pair = {0, 0, 0, 0, 1, 1}, bad(ids.size(), 2);
  const EncoderInput none{ids, {}}, first{ids, zeros}, second{ids, pair}, out_of_range{ids, bad};
  EXPECT_EQ(session.encode({&none, 1}), session.encode({&first, 1}));
  EXPECT_NE(session.encode({&none, 1}), session.encode({&second, 1}));
  EXPECT_THROW(session.encode({&out_of_range, 1}), Error);
}

}  // namespace
}  // namespace canrun
