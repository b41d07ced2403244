// The sentence-transformers pipeline over the encoder fixtures of tools/make_encoder_fixtures.py:
// embeddings against sentence-transformers' in the committed goldens, on ref, cpu and compiled
// cpu; the folder's files and the inputs a user gets wrong; truncation that keeps the special tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "embed/sentence_model.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "encoder_fixtures.h"
#include "util/json.h"

namespace canrun {
namespace {

using namespace encoder_fixtures;
namespace fs = std::filesystem;

double cosine(const float* a, const double* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += a[i] * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

class SentencePipeline : public testing::TestWithParam<std::tuple<Engine, std::string>> {};

TEST_P(SentencePipeline, EmbeddingsMatchSentenceTransformers) {
  const auto& [engine, name] = GetParam();
  const Json recorded = golden(name);
  Session session(folder(name), options_for(engine));
  SentenceEncoder encoder(session);
  const std::vector<std::string> texts = recorded["texts"].get<std::vector<std::string>>();
  EmbedOptions options;
  if (recorded["prompt_name"].is_string()) options.prompt_name = recorded["prompt_name"].get<std::string>();
  options.batch_tokens = 24;  // several forward passes
  const Embeddings got = encoder.embed(texts, options);
  EXPECT_GT(got.forward_passes, 1);
  double worst_cosine = 1;
  float worst = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<double> expected = recorded["embeddings"][i].get<std::vector<double>>();
    ASSERT_EQ(static_cast<int64_t>(expected.size()), got.dimension);
    const float* row = got.vectors.data() + i * expected.size();
    worst_cosine = std::min(worst_cosine, cosine(row, expected.data(), expected.size()));
    for (size_t j = 0; j < expected.size(); ++j)
      worst = std::max(worst, static_cast<float>(std::abs(row[j] - expected[j])));
  }
  EXPECT_GE(worst_cosine, 0.99999);
  EXPECT_LT(worst, tolerance(engine));
  char measured[32];
  std::snprintf(measured, sizeof measured, "%.9f", worst_cosine);
  RecordProperty("min_cosine", measured);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SentencePipeline,
                         testing::Combine(testing::Values(Engine::kRef, Engine::kCpu, Engine::kCpuCompiled),
                                          testing::ValuesIn(kNames)),
                         [](const testing::TestParamInfo<SentencePipeline::ParamType>& info) {
                           return engine_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

// --products bf16: f32 weights packed as bf16 move the embeddings by bf16's rounding only,
// within the lab's bound for bf16 products, and their plans are cached apart from f32's.
TEST(SentenceProducts, Bf16ProductsStayWithinCosine0999AndArePlannedApart) {
  const Json recorded = golden("bert_mean");
  const std::vector<std::string> texts = recorded["texts"].get<std::vector<std::string>>();
  const fs::path cache = fs::temp_directory_path() / "canrun_bf16_products_plans";
  fs::remove_all(cache);
  const auto embed_with = [&](DType products, int64_t& compilations) {
    SessionOptions options = options_for(Engine::kCpuCompiled);
    options.compile->use_cache = true;
    options.compile->cache_dir = cache;
    options.compile->products = products;
    Session session(folder("bert_mean"), options);
    SentenceEncoder encoder(session);
    const Embeddings got = encoder.embed(texts, EmbedOptions{});
    compilations = session.compiled()->stats().compilations;
    return got.vectors;
  };
  int64_t f32_compilations = 0, bf16_compilations = 0;
  const std::vector<float> f32 = embed_with(DType::kF32, f32_compilations);
  const std::vector<float> bf16 = embed_with(DType::kBF16, bf16_compilations);
  EXPECT_GT(f32_compilations, 0);
  EXPECT_GT(bf16_compilations, 0) << "bf16 products read f32's plans";
  EXPECT_NE(f32, bf16);
  const size_t dimension = f32.size() / texts.size();
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<double> expected = recorded["embeddings"][i].get<std::vector<double>>();
    EXPECT_GE(cosine(bf16.data() + i * dimension, expected.data(), dimension), 0.999) << "text " << i;
  }
  fs::remove_all(cache);
}

// A copy of a fixture with one of its sentence-transformers files replaced.
fs::path fixture_with(const std::string& name, const std::string& file, const Json& content) {
  const fs::path dir = fs::temp_directory_path() / ("canrun_encoder_" + name);
  fs::remove_all(dir);
  fs::copy(folder(name), dir, fs::copy_options::recursive);
  std::ofstream((dir / file).string()) << content.dump();
  return dir;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Opens a folder's pipeline on ref: what its files get wrong is the error.
void open_pipeline(const fs::path& dir) {
  Session session(dir.string(), uncompiled(Backend::kRef));
  SentenceEncoder encoder(session);
}

TEST(SentenceFolder, BadFolderFilesAreNamedWithTheirField) {
  const fs::path unknown_mode = fixture_with("bert_mean", "1_Pooling/config.json", {{"pooling_mode", "median"}});
  std::string message = error_of([&] { open_pipeline(unknown_mode); });
  EXPECT_NE(message.find("1_Pooling/config.json: field 'pooling_mode'"), std::string::npos) << message;
  EXPECT_NE(message.find("median"), std::string::npos) << message;

  const fs::path unknown_flag =
      fixture_with("bert_mean", "1_Pooling/config.json", {{"pooling_mode_median_tokens", true}});
  message = error_of([&] { open_pipeline(unknown_flag); });
  EXPECT_NE(message.find("pooling_mode_median_tokens"), std::string::npos) << message;

  const fs::path bad_dense = fixture_with("roberta_cls_dense", "2_Dense/config.json",
                                          {{"in_features", 31}, {"out_features", 16}, {"bias", true}});
  message = error_of([&] { open_pipeline(bad_dense); });
  EXPECT_NE(message.find("2_Dense/config.json: field 'in_features': 31 does not match the 32"), std::string::npos)
      << message;
  for (const fs::path& dir : {unknown_mode, unknown_flag, bad_dense}) fs::remove_all(dir);
}

TEST(SentenceFolder, TruncationOffRefusesALongInputAndNoInputIsAnError) {
  Session session(folder("bert_mean"), uncompiled(Backend::kRef));
  SentenceEncoder encoder(session);
  const std::vector<std::string> long_text = {golden("bert_mean")["texts"][2].get<std::string>()};
  EmbedOptions options;
  options.truncate = false;
  const std::string message = error_of([&] { encoder.embed(long_text, options); });
  EXPECT_NE(message.find("over the model's max_seq_length of 24"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { encoder.embed({}, EmbedOptions{}); }).find("no texts"), std::string::npos);
  options.truncate = true;
  options.prompt_name = "nonesuch";
  EXPECT_NE(error_of([&] { encoder.embed(long_text, options); }).find("--prompt-name: 'nonesuch'"), std::string::npos);
}

TEST(Tokenizer, TruncatedEncodingKeepsTheSpecialTokens) {
  const Tokenizer tokenizer = Tokenizer::from_file(folder("bert_mean") + "/tokenizer.json");
  const Tokenizer::Encoding whole = tokenizer.encode("the quick brown fox jumps over the lazy dog");
  ASSERT_GT(whole.ids.size(), 6u);
  const Tokenizer::Encoding cut = tokenizer.encode_truncated("the quick brown fox jumps over the lazy dog", 6);
  ASSERT_EQ(cut.ids.size(), 6u);
  EXPECT_EQ(std::vector<int32_t>(cut.ids.begin(), cut.ids.end() - 1),
            std::vector<int32_t>(whole.ids.begin(), whole.ids.begin() + 5));
  EXPECT_EQ(cut.ids.back(), whole.ids.back());
  EXPECT_THROW(tokenizer.encode_truncated("the", 2), Error);
}

}  // namespace
}  // namespace canrun
