// The encoder check protocol: its verdicts on given numbers, and whole checks of the encoder
// fixtures and of synthetic encoders made from catalog rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "lab/catalog.h"
#include "lab/check.h"
#include "lab/encoder_check.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kEncoders = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/encoders";

TEST(LabEncoderCheck, MinCosineFindsTheWorstSentence) {
  const std::vector<float> reference = {1, 0, 0, 1, 3, 4};
  const std::vector<float> tested = {1, 0, 0.1f, 1, 3, 4};
  const CosineResult result = min_cosine(tested, reference, 2);
  EXPECT_EQ(result.row, 1);
  EXPECT_NEAR(result.min_cosine, 1 / std::sqrt(1.01), 1e-7);
  EXPECT_DOUBLE_EQ(min_cosine(reference, reference, 2).min_cosine, 1.0);
  EXPECT_THROW(min_cosine(tested, std::vector<float>{1, 0}, 2), Error);
  EXPECT_THROW(min_cosine(std::vector<float>{0, 0}, std::vector<float>{1, 0}, 2), Error);
}

TEST(LabEncoderCheck, EmbeddingVerdictHoldsTheThreshold) {
  ResultRow row;
  record_embedding_verdict({0.99999, 0}, kMinCosineF32, row);
  EXPECT_EQ(row.result, "PASS");
  EXPECT_EQ(row.min_cosine, 0.99999);
  EXPECT_EQ(row.verification, "cosine");
  ResultRow low;
  record_embedding_verdict({0.9995, 3}, kMinCosineF32, low);
  EXPECT_EQ(low.result, "FAIL_MISMATCH");
  EXPECT_NE(low.error_message->find("sentence 3"), std::string::npos) << *low.error_message;
  ResultRow bf16;
  record_embedding_verdict({0.9995, 3}, kMinCosineBf16, bf16);
  EXPECT_EQ(bf16.result, "PASS");
}

TEST(LabEncoderCheck, RankingVerdictNeedsTheOrderAndTheScores) {
  const std::vector<double> reference = {0.9, 0.1, 0.5, -2};
  ResultRow same;
  record_ranking_verdict(std::vector<double>{0.90005, 0.1, 0.5, -2}, reference, same);
  EXPECT_EQ(same.result, "PASS");
  EXPECT_NEAR(*same.max_score_difference, 5e-5, 1e-12);
  ResultRow off;
  record_ranking_verdict(std::vector<double>{0.9003, 0.1, 0.5, -2}, reference, off);
  EXPECT_EQ(off.result, "FAIL_MISMATCH");
  ResultRow swapped;  // within the tolerance, but two documents change places
  record_ranking_verdict(std::vector<double>{0.9, 0.50002, 0.49999, -2}, std::vector<double>{0.9, 0.49999, 0.50002, -2},
                         swapped);
  EXPECT_EQ(swapped.result, "FAIL_MISMATCH");
  EXPECT_NE(swapped.error_message->find("another order"), std::string::npos);
}

TEST(LabEncoderCheck, EncoderFixturesPass) {
  TemporaryDirectory plans("canrun-encoder-plans-");
  CheckOptions options;
  options.cache_dir = plans.path().string();
  options.model = (kEncoders / "bert_mean").string();
  const ResultRow embedding = run_check(options);
  EXPECT_EQ(embedding.result, "PASS") << embedding.error_message.value_or("");
  EXPECT_EQ(embedding.task, "sentence-similarity");
  EXPECT_GE(embedding.min_cosine.value_or(0), kMinCosineF32);
  EXPECT_GT(embedding.sentences_per_s.value_or(0), 0);
  EXPECT_EQ(embedding.verification, "cosine");
  EXPECT_FALSE(embedding.generated_token_ids.has_value());
  EXPECT_GT(embedding.compile_time_s.value_or(-1), 0);

  options.model = (kEncoders / "bert_cross_encoder").string();
  const ResultRow ranking = run_check(options);
  EXPECT_EQ(ranking.result, "PASS") << ranking.error_message.value_or("");
  EXPECT_EQ(ranking.task, "text-ranking");
  EXPECT_LE(ranking.max_score_difference.value_or(1), kMaxScoreDifference);
  EXPECT_FALSE(ranking.min_cosine.has_value());
}

// A causal LM's family run as an embedder reads no LM head, and the planner counts none: the
// parameters planned are those the folder stores (Qwen3Model, untied, saved without lm_head).
TEST(LabEncoderCheck, ADecoderFamilysEmbedderIsPlannedWithoutItsLmHead) {
  TemporaryDirectory plans("canrun-encoder-plans-");
  CheckOptions options;
  options.cache_dir = plans.path().string();
  options.model = (kEncoders / "qwen3_last_token").string();
  const ResultRow row = run_check(options);
  EXPECT_EQ(row.result, "PASS") << row.error_message.value_or("");
  int64_t stored = 0;
  const WeightStore store = WeightStore::open_folder(options.model, false);
  for (const auto& [name, record] : store.records()) stored += record->numel();
  EXPECT_EQ(row.parameter_count, stored);
}

// A catalog of one small encoder of each protocol, as tools/build_catalog.py writes its rows.
std::string write_catalog(const fs::path& dir) {
  const Json bert = {{"hidden_size", 32}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                     {"intermediate_size", 64}, {"vocab_size", 1000}, {"max_position_embeddings", 128},
                     {"type_vocab_size", 2}, {"hidden_act", "gelu"}, {"layer_norm_eps", 1e-12}};
  const Json popularity = {{"downloads", {{"count", nullptr}, {"rank", nullptr}, {"note", "none"}}},
                           {"trending", {{"rank", nullptr}, {"note", "none"}}}};
  const Json embedder = {{"id", "test/tiny-embedder"}, {"task", "feature-extraction"}, {"model_type", "bert"},
                         {"architectures", {"BertModel"}}, {"config", bert}, {"popularity", popularity},
                         {"selected", true}, {"exclusion", nullptr},
                         {"sentence_transformers",
                          {{"modules", {"Transformer", "Pooling", "Normalize"}},
                           {"pooling", {{"mode", "cls"}}},
                           {"max_seq_length", 64}}}};
  Json ranker_config = bert;
  ranker_config["extra"] = {{"id2label", {{"0", "LABEL_0"}}}};
  const Json ranker = {{"id", "test/tiny-ranker"}, {"task", "text-ranking"}, {"model_type", "bert"},
                       {"architectures", {"BertForSequenceClassification"}}, {"config", ranker_config},
                       {"popularity", popularity}, {"selected", true}, {"exclusion", nullptr}};
  const fs::path path = dir / "catalog.jsonl";
  std::ofstream(path) << embedder.dump() << "\n" << ranker.dump() << "\n";
  return path.string();
}

TEST(LabEncoderCheck, SyntheticEncodersFromTheCatalogPass) {
  TemporaryDirectory scratch("canrun-encoder-synthetic-");
  const std::string cache = (scratch.path() / "cache").string();
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  CheckOptions options;
  options.catalog = write_catalog(scratch.path());
  options.cache_dir = (scratch.path() / "plans").string();
  options.synthetic = true;
  options.model = "test/tiny-embedder";
  const ResultRow embedding = run_check(options);
  EXPECT_EQ(embedding.result, "PASS") << embedding.error_message.value_or("");
  EXPECT_EQ(embedding.weights, "synthetic");
  EXPECT_GE(embedding.min_cosine.value_or(0), kMinCosineBf16);
  const fs::path folder = fs::path(cache) / "canrun/synthetic/test-tiny-embedder";
  const Json pooling = read_json_file((folder / "1_Pooling/config.json").string(), ErrorKind::kIo);
  EXPECT_EQ(pooling["pooling_mode_cls_token"], true);
  EXPECT_EQ(read_json_file((folder / "modules.json").string(), ErrorKind::kIo).size(), 3u);
  EXPECT_TRUE(fs::is_regular_file(folder / "tokenizer.json"));

  options.model = "test/tiny-ranker";
  const ResultRow ranking = run_check(options);
  EXPECT_EQ(ranking.result, "PASS") << ranking.error_message.value_or("");
  EXPECT_EQ(ranking.task, "text-ranking");
  EXPECT_TRUE(ranking.max_score_difference.has_value());
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace canrun
