// Cross-encoders against sentence-transformers' CrossEncoder scores in the goldens of
// tools/make_encoder_fixtures.py: the pairs' ids and token types as the tokenizer makes them, the
// scores after the activation config.json names, on ref, cpu and compiled cpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "embed/cross_encoder.h"
#include "encoder_fixtures.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

using namespace encoder_fixtures;

class CrossEncoderParity : public testing::TestWithParam<std::tuple<Engine, std::string>> {};

TEST_P(CrossEncoderParity, ScoresMatchSentenceTransformers) {
  const auto& [engine, name] = GetParam();
  const Json recorded = golden(name);
  Session session(folder(name), options_for(engine));
  CrossEncoder encoder(session);
  const std::string query = recorded["query"].get<std::string>();
  const std::vector<std::string> documents = recorded["documents"].get<std::vector<std::string>>();
  const Tokenizer tokenizer = Tokenizer::from_file(folder(name) + "/tokenizer.json");
  for (size_t i = 0; i < documents.size(); ++i) {
    const Tokenizer::Encoding pair =
        tokenizer.encode_truncated(query, documents[i], Tokenizer::Truncation(static_cast<size_t>(encoder.max_length())));
    EXPECT_EQ(pair.ids, recorded["ids"][i].get<std::vector<int32_t>>()) << "document " << i;
    EXPECT_EQ(pair.type_ids, recorded["type_ids"][i].get<std::vector<int32_t>>()) << "document " << i;
  }
  const std::vector<RankedDocument> scored = encoder.score(query, documents);
  ASSERT_EQ(scored.size(), documents.size());
  for (size_t i = 0; i < documents.size(); ++i) {
    const std::vector<double> expected = recorded["scores"][i].get<std::vector<double>>();
    ASSERT_EQ(scored[i].scores.size(), expected.size());
    for (size_t j = 0; j < expected.size(); ++j) EXPECT_NEAR(scored[i].scores[j], expected[j], tolerance(engine));
  }
  const std::vector<RankedDocument> ranked = encoder.rank(query, documents);
  for (size_t i = 1; i < ranked.size(); ++i) EXPECT_GE(ranked[i - 1].scores[0], ranked[i].scores[0]);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CrossEncoderParity,
                         testing::Combine(testing::Values(Engine::kRef, Engine::kCpu, Engine::kCpuCompiled),
                                          testing::ValuesIn(kCrossEncoders)),
                         [](const testing::TestParamInfo<CrossEncoderParity::ParamType>& info) {
                           return engine_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

TEST(CrossEncoder, RawScoresAreTheLogitsBeforeTheSigmoid) {
  Session session(folder("xlm_roberta_cross_encoder"), uncompiled(Backend::kRef));
  CrossEncoder encoder(session);
  EXPECT_EQ(encoder.head().activation, ScoreActivation::kSigmoid);
  const std::vector<std::string> documents = {"Hello world"};
  const float activated = encoder.score("a fox", documents)[0].scores[0];
  const float raw = encoder.score("a fox", documents, /*raw=*/true)[0].scores[0];
  EXPECT_NEAR(activated, 1.0f / (1.0f + std::exp(-raw)), 1e-6f);
}

TEST(CrossEncoder, AModelWithoutAClassificationHeadIsNamed) {
  Session session(folder("bert_mean"), uncompiled(Backend::kRef));
  try {
    CrossEncoder encoder(session);
    FAIL() << "a sentence-transformers model was taken for a cross-encoder";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("config.json: field 'architectures'"), std::string::npos) << message;
    EXPECT_NE(message.find("not a cross-encoder"), std::string::npos) << message;
  }
}

// ModernBERT's head pools by the first token or the mean (classifier_pooling); anything else is
// named before a pair is scored.
TEST(CrossEncoder, ModernBertNamesAPoolingItDoesNotRead) {
  TemporaryDirectory scratch("canrun-modernbert-head-");
  const std::filesystem::path copy = scratch.path() / "model";
  std::filesystem::copy(folder("modernbert_cross_encoder"), copy);
  Json config = read_json_file((copy / "config.json").string(), ErrorKind::kIo);
  config["classifier_pooling"] = "max";
  std::ofstream(copy / "config.json") << config.dump();
  Session session(copy.string(), uncompiled(Backend::kRef));
  try {
    CrossEncoder encoder(session);
    FAIL() << "classifier_pooling max was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'classifier_pooling': 'max' is not supported"), std::string::npos)
        << e.what();
  }
}

// GTE's head as transformers saves it: the base model under "gte." (the fixture stores the
// Hub's "new."); the same scores either way.
TEST(CrossEncoder, GteReadsTheBaseModelUnderEitherPrefix) {
  TemporaryDirectory scratch("canrun-gte-prefix-");
  const std::filesystem::path copy = scratch.path() / "model";
  std::filesystem::copy(folder("gte_cross_encoder"), copy);
  // A safetensors file: the header's length (8 bytes, little-endian), its JSON, then the data.
  std::ifstream in(copy / "model.safetensors", std::ios::binary);
  uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), sizeof length);
  std::string header(length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  const std::string data{std::istreambuf_iterator<char>(in), {}};
  in.close();
  const Json stored = Json::parse(header);
  Json renamed = Json::object();
  for (const auto& [name, entry] : stored.items())
    renamed[name.starts_with("new.") ? "gte." + name.substr(4) : name] = entry;
  const std::string written = renamed.dump();
  const uint64_t written_length = written.size();
  std::ofstream out(copy / "model.safetensors", std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&written_length), sizeof written_length);
  out << written << data;
  out.close();

  const Json recorded = golden("gte_cross_encoder");
  Session session(copy.string(), uncompiled(Backend::kRef));
  CrossEncoder encoder(session);
  EXPECT_EQ(session.spec().base_model_prefix, "gte.");
  const std::vector<std::string> documents = recorded["documents"].get<std::vector<std::string>>();
  const std::vector<RankedDocument> scored = encoder.score(recorded["query"].get<std::string>(), documents);
  for (size_t i = 0; i < documents.size(); ++i)
    EXPECT_NEAR(scored[i].scores[0], recorded["scores"][i][0].get<double>(), 1e-4) << "document " << i;
}

}  // namespace
}  // namespace canrun
