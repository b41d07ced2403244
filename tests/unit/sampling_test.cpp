// Sampling as transformers does it. The goldens (tests/goldens/sampling.json) were made by
// tools/make_sampling_goldens.py with transformers 5.23.0 and torch 2.15 (recorded in the
// file): its processor classes on a hand-made score vector, and the processors generate itself
// builds for three settings on the llama_f32 fixture's logits after "Hello world".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "checkpoint/generation_config.h"
#include "kernels/top_k.h"
#include "runtime/sampling.h"
#include "runtime/session.h"
#include "util/error.h"
#include "util/json.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceDir = CANRUN_SOURCE_DIR;
const fs::path kFixture = kSourceDir / "tests/fixtures/models/llama_f32";
constexpr float kRemoved = -std::numeric_limits<float>::infinity();

const Json& golden() {
  static const Json json = read_json_file((kSourceDir / "tests/goldens/sampling.json").string(), ErrorKind::kIo);
  return json;
}

// Golden scores: null is a removed token (-inf, which JSON cannot write).
std::vector<float> golden_scores(const Json& values) {
  std::vector<float> scores;
  for (const Json& value : values) scores.push_back(value.is_null() ? kRemoved : value.get<float>());
  return scores;
}

std::vector<int32_t> prompt_ids() { return golden()["prompt_ids"].get<std::vector<int32_t>>(); }

// A golden setting's parameters over transformers' defaults, sampling.
SamplingParams setting_params(const Json& setting) {
  SamplingParams params;
  params.do_sample = true;
  const Json& given = setting["params"];
  if (given.contains("temperature")) params.temperature = given["temperature"].get<double>();
  if (given.contains("top_k")) params.top_k = given["top_k"].get<int64_t>();
  if (given.contains("top_p")) params.top_p = given["top_p"].get<double>();
  if (given.contains("min_p")) params.min_p = given["min_p"].get<double>();
  if (given.contains("repetition_penalty")) params.repetition_penalty = given["repetition_penalty"].get<double>();
  return params;
}

// The names of the processors process_logits runs for `params`, as transformers names them.
std::vector<std::string> processor_names(const SamplingParams& params) {
  std::vector<std::string> names;
  if (params.repetition_penalty != 1.0) names.push_back("RepetitionPenaltyLogitsProcessor");
  if (params.temperature != 1.0) names.push_back("TemperatureLogitsWarper");
  if (params.top_k != 0) names.push_back("TopKLogitsWarper");
  if (params.top_p < 1.0) names.push_back("TopPLogitsWarper");
  if (params.min_p) names.push_back("MinPLogitsWarper");
  return names;
}

Session& fixture_session() {
  static Session session(kFixture.string(), uncompiled(Backend::kRef));
  return session;
}

// The logits canrun computes after the golden's prompt (ref backend).
const std::vector<float>& fixture_logits() {
  static const std::vector<float> logits = [] {
    GenerateRequest request;
    request.max_new_tokens = 0;
    return fixture_session().generate(prompt_ids(), request).prompt_logits;
  }();
  return logits;
}

// `tokens` new tokens after the golden's prompt, never stopping at eos; `seed` gets the seed used.
std::vector<int32_t> generate(const SamplingParams& params, int64_t tokens, std::optional<uint64_t>* seed = nullptr) {
  GenerateRequest request;
  request.max_new_tokens = tokens;
  request.eos_token_ids = std::vector<int32_t>{};
  request.sampling = params;
  const GenerationResult result = fixture_session().generate(prompt_ids(), request);
  if (seed) *seed = result.seed;
  return result.tokens;
}

TEST(SamplingProcessors, EachMatchesTransformersOnTiesAndNegativeScores) {
  ASSERT_EQ(golden()["processors"].size(), 7u);
  for (const Json& c : golden()["processors"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(c.dump());
    std::vector<float> scores = golden_scores(c["scores"]);
    if (name == "repetition_penalty")
      apply_repetition_penalty(scores, c["ids"].get<std::vector<int32_t>>(), c["penalty"].get<double>());
    else if (name == "temperature")
      apply_temperature(scores, c["temperature"].get<double>());
    else if (name == "top_k")
      apply_top_k(scores, c["top_k"].get<int64_t>());
    else if (name == "top_p")
      apply_top_p(scores, c["top_p"].get<double>());
    else if (name == "min_p")
      apply_min_p(scores, c["min_p"].get<double>());
    else
      FAIL() << "unknown processor " << name;
    // The same float32 arithmetic as torch's: equal bits, -inf where a token is removed.
    EXPECT_EQ(scores, golden_scores(c["expected"]));
  }
}

TEST(SamplingProcessors, GenerateSettingsMatchTransformersOnFixtureLogits) {
  const std::vector<float> logits = golden_scores(golden()["logits"]);
  ASSERT_EQ(golden()["settings"].size(), 3u);
  for (const Json& setting : golden()["settings"]) {
    SCOPED_TRACE(setting["name"].get<std::string>());
    const SamplingParams params = setting_params(setting);
    // generate built exactly the processors process_logits runs, in this order.
    EXPECT_EQ(processor_names(params), setting["processors"].get<std::vector<std::string>>());
    std::vector<float> scores = logits;
    process_logits(scores, prompt_ids(), params);
    std::vector<int32_t> kept;
    for (size_t i = 0; i < scores.size(); ++i)
      if (scores[i] != kRemoved) kept.push_back(static_cast<int32_t>(i));
    ASSERT_EQ(kept, setting["kept_ids"].get<std::vector<int32_t>>());
    const std::vector<double> probabilities = softmax_probabilities(scores);
    const std::vector<double> expected = setting["probabilities"].get<std::vector<double>>();
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_NEAR(probabilities[kept[i]], expected[i], 1e-6) << kept[i];
  }
}

TEST(SamplingProcessors, SoftmaxIgnoresRemovedTokens) {
  const std::vector<double> p = softmax_probabilities(std::vector<float>{0.0f, kRemoved, std::log(3.0f)});
  EXPECT_NEAR(p[0], 0.25, 1e-7);
  EXPECT_EQ(p[1], 0.0);
  EXPECT_NEAR(p[2], 0.75, 1e-7);
}

// The statistical check: the first token drawn with seeds 0..3999 from canrun's logits is
// distributed as transformers' processed softmax for the same prompt. Pearson's chi-square
// over the kept tokens, those with an expectation below 5 pooled into one bin (into the
// smallest other bin when the pool itself is under 5), must stay below the 1e-4 critical value
// for its degrees of freedom; a token transformers removes must never be drawn.
TEST(SamplingStatistics, FirstTokenFrequenciesMatchTransformers) {
  constexpr int kDraws = 4000;
  struct Bound {
    int64_t degrees_of_freedom;
    double critical;  // P(chi-square(dof) > critical) = 1e-4
  };
  const std::map<std::string, Bound> bounds = {
      {"temperature_0.7", {34, 73.481}},
      {"top_p_0.8_repetition_1.3", {95, 154.991}},
      {"top_k_40_min_p_0.05_repetition_0.8", {7, 29.878}},
  };
  const std::vector<float>& logits = fixture_logits();
  const std::vector<float> reference = golden_scores(golden()["logits"]);
  ASSERT_EQ(logits.size(), reference.size());
  for (size_t i = 0; i < logits.size(); ++i) ASSERT_NEAR(logits[i], reference[i], 1e-4) << i;

  for (const Json& setting : golden()["settings"]) {
    const std::string name = setting["name"].get<std::string>();
    SCOPED_TRACE(name);
    SamplingParams params = setting_params(setting);
    std::vector<int64_t> counts(logits.size());
    for (int seed = 0; seed < kDraws; ++seed) {
      params.seed = seed;
      ++counts[Sampler(params).next(logits, prompt_ids())];
    }
    const std::vector<int32_t> kept = setting["kept_ids"].get<std::vector<int32_t>>();
    const std::vector<double> probabilities = setting["probabilities"].get<std::vector<double>>();
    int64_t drawn_kept = 0;
    for (int32_t id : kept) drawn_kept += counts[id];
    EXPECT_EQ(drawn_kept, kDraws) << "a token transformers removes was drawn";

    // (expected, observed) per kept token, the likeliest first; then the bins.
    std::vector<std::pair<double, double>> cells;
    for (size_t i = 0; i < kept.size(); ++i)
      cells.emplace_back(kDraws * probabilities[i], static_cast<double>(counts[kept[i]]));
    std::sort(cells.begin(), cells.end(), std::greater<>());
    std::vector<std::pair<double, double>> bins;
    std::pair<double, double> pool{0, 0};
    for (const auto& cell : cells) {
      auto& bin = cell.first >= 5 ? bins.emplace_back() : pool;
      bin.first += cell.first;
      bin.second += cell.second;
    }
    if (pool.first >= 5) {
      bins.push_back(pool);
    } else if (pool.first > 0) {
      bins.back().first += pool.first;
      bins.back().second += pool.second;
    }
    double chi_square = 0;
    for (const auto& [expected, observed] : bins)
      chi_square += (observed - expected) * (observed - expected) / expected;
    const Bound bound = bounds.at(name);
    ASSERT_EQ(static_cast<int64_t>(bins.size()) - 1, bound.degrees_of_freedom);
    EXPECT_LT(chi_square, bound.critical);
    std::printf("%s: chi-square %.2f with %lld degrees of freedom (bound %.2f at p = 1e-4)\n", name.c_str(), chi_square,
                static_cast<long long>(bound.degrees_of_freedom), bound.critical);
  }
}

TEST(Sampler, SameSeedGivesTheSameTokens) {
  SamplingParams params;
  params.do_sample = true;
  params.temperature = 1.5;
  params.top_k = 0;
  params.seed = 7;
  std::optional<uint64_t> seed;
  const std::vector<int32_t> first = generate(params, 16, &seed);
  EXPECT_EQ(seed, std::optional<uint64_t>(7));
  EXPECT_EQ(generate(params, 16), first);
  params.seed = 8;
  EXPECT_NE(generate(params, 16), first);
}

TEST(Sampler, DifferentSeedsDifferOnAFlatDistribution) {
  const std::vector<float> flat(1000, 0.0f);
  SamplingParams params;
  params.do_sample = true;
  params.top_k = 0;
  std::vector<std::vector<int32_t>> draws;
  for (uint64_t seed : {1, 2}) {
    params.seed = seed;
    Sampler sampler(params);
    std::vector<int32_t>& ids = draws.emplace_back();
    for (int i = 0; i < 16; ++i) ids.push_back(sampler.next(flat, {}));
  }
  EXPECT_NE(draws[0], draws[1]);
  // Not stuck on one token either.
  EXPECT_GT(std::set<int32_t>(draws[0].begin(), draws[0].end()).size(), 8u);
}

// The draws of a seed are fixed by the generator (mt19937_64, standard-specified) and canrun's
// own bits-to-double step, so a seed repeats a run on any platform. On a flat distribution of
// 1000 tokens each draw is floor(1000 u).
TEST(Sampler, DrawsOfASeedArePinned) {
  const std::vector<float> flat(1000, 0.0f);
  SamplingParams params;
  params.do_sample = true;
  params.top_k = 0;
  params.seed = 42;
  Sampler sampler(params);
  std::vector<int32_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(sampler.next(flat, {}));
  std::mt19937_64 engine(42);
  std::vector<int32_t> expected;
  for (int i = 0; i < 6; ++i)
    expected.push_back(static_cast<int32_t>(static_cast<double>(engine() >> 11) * 0x1.0p-53 * 1000));
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(ids, (std::vector<int32_t>{755, 639, 752, 136, 903, 94}));
}

TEST(Sampler, WithoutASeedReportsTheOneItDrewWith) {
  SamplingParams params;
  params.do_sample = true;
  params.temperature = 1.5;
  std::optional<uint64_t> seed;
  const std::vector<int32_t> tokens = generate(params, 16, &seed);
  ASSERT_TRUE(seed.has_value());
  params.seed = seed;
  EXPECT_EQ(generate(params, 16), tokens);
}

TEST(Sampler, TopKOfOneIsGreedy) {
  SamplingParams params;
  params.do_sample = true;
  params.temperature = 0.7;
  params.top_k = 1;
  params.seed = 3;
  std::optional<uint64_t> greedy_seed;
  const std::vector<int32_t> greedy = generate(SamplingParams{}, 16, &greedy_seed);
  EXPECT_FALSE(greedy_seed.has_value());
  EXPECT_EQ(generate(params, 16), greedy);
}

// 1/T of a tiny temperature overflows the float32 scores (transformers' logits / 1e-300 are inf and
// its softmax NaN): such a temperature is refused, naming it, before any draw.
TEST(Sampler, ATemperatureTooSmallToDivideByIsRefusedNamingIt) {
  SamplingParams params;
  params.do_sample = true;
  for (const double temperature : {1e-300, 1e-40, 0.009}) {
    params.temperature = temperature;
    const std::optional<SamplingProblem> problem = sampling_problem(params);
    ASSERT_TRUE(problem) << temperature;
    EXPECT_EQ(problem->field, "temperature");
    try {
      Sampler sampler(params);
      ADD_FAILURE() << "temperature " << temperature << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("temperature must be at least 0.01"), std::string::npos) << e.what();
    }
  }
  params.temperature = kMinTemperature;
  EXPECT_FALSE(sampling_problem(params));
  EXPECT_NO_THROW(Sampler{params});
}

TEST(Sampler, GreedyIsTheFirstMaximum) {
  Sampler sampler{SamplingParams{}};
  EXPECT_FALSE(sampler.seed().has_value());
  for (const std::vector<float>& logits : {std::vector<float>{1.0f, 7.0f, 7.0f, -2.0f}, fixture_logits()})
    EXPECT_EQ(sampler.next(logits, {}), top_k_indices(logits, 1).front());
}

// transformers applies the repetition penalty without sampling too, over the prompt and the
// generated ids: a penalty below 1 rewards repetition, and changes these greedy tokens.
TEST(Sampler, GreedyAppliesTheRepetitionPenaltyAsTransformers) {
  const Json& c = golden()["greedy_repetition_penalty"];
  SamplingParams params;
  params.repetition_penalty = c["repetition_penalty"].get<double>();
  const std::vector<int32_t> expected = c["generated_ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(generate(params, static_cast<int64_t>(expected.size())), expected);
  EXPECT_NE(generate(SamplingParams{}, static_cast<int64_t>(expected.size())), expected);
}

void expect_rejected(const SamplingParams& params, const std::string& fragment) {
  try {
    Sampler sampler(params);
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Sampler, RejectsValuesOutOfRange) {
  SamplingParams sampling;
  sampling.do_sample = true;
  const auto with = [&](auto edit) {
    SamplingParams params = sampling;
    edit(params);
    return params;
  };
  expect_rejected(with([](SamplingParams& p) { p.temperature = 0; }), "temperature must be > 0");
  expect_rejected(with([](SamplingParams& p) { p.temperature = std::nan(""); }), "temperature");
  expect_rejected(with([](SamplingParams& p) { p.top_k = -1; }), "top_k");
  expect_rejected(with([](SamplingParams& p) { p.top_p = 1.5; }), "top_p");
  expect_rejected(with([](SamplingParams& p) { p.min_p = -0.1; }), "min_p");
  expect_rejected(with([](SamplingParams& p) { p.repetition_penalty = 0; }), "repetition_penalty");
  // Greedy does not divide by the temperature.
  SamplingParams greedy;
  greedy.temperature = 0;
  EXPECT_NO_THROW(Sampler{greedy});
}

class GenerationConfigSampling : public testing::Test {
 protected:
  GenerationConfig read(const std::string& generation_config, const Json& model_config = Json::object()) {
    if (!generation_config.empty()) std::ofstream(dir_.path() / "generation_config.json") << generation_config;
    return read_generation_config(dir_.path().string(), model_config, 100);
  }
  TemporaryDirectory dir_{"canrun-generation-config-"};
};

TEST_F(GenerationConfigSampling, AbsentFieldsAreTransformersDefaults) {
  const GenerationConfig config = read(R"({"eos_token_id": 2})");
  EXPECT_FALSE(config.do_sample);
  EXPECT_EQ(config.temperature, 1.0);
  EXPECT_EQ(config.top_k, 50);
  EXPECT_EQ(config.top_p, 1.0);
  EXPECT_FALSE(config.min_p.has_value());
  EXPECT_EQ(config.repetition_penalty, 1.0);
}

TEST_F(GenerationConfigSampling, ReadsTheSamplingFields) {
  const GenerationConfig config = read(
      R"({"do_sample": true, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "min_p": 0.05,
          "repetition_penalty": 1.1})");
  EXPECT_TRUE(config.do_sample);
  EXPECT_EQ(config.temperature, 0.6);
  EXPECT_EQ(config.top_k, 20);
  EXPECT_EQ(config.top_p, 0.95);
  EXPECT_EQ(config.min_p, std::optional<double>(0.05));
  EXPECT_EQ(config.repetition_penalty, 1.1);
}

TEST_F(GenerationConfigSampling, WithoutTheFileConfigJsonsFieldsCount) {
  const GenerationConfig config = read("", Json{{"do_sample", true}, {"top_k", 5}});
  EXPECT_TRUE(config.do_sample);
  EXPECT_EQ(config.top_k, 5);
}

TEST_F(GenerationConfigSampling, WrongTypesAndValuesNameTheFileAndField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"do_sample": "yes"})", "'do_sample': must be true or false"},
      {R"({"temperature": "hot"})", "'temperature': must be a number"},
      {R"({"temperature": -0.5})", "'temperature': must be >= 0"},
      {R"({"top_k": 2.5})", "'top_k': must be an integer"},
      {R"({"top_k": -1})", "'top_k'"},
      {R"({"top_p": 1.5})", "'top_p': must be in [0, 1]"},
      {R"({"min_p": -0.1})", "'min_p': must be in [0, 1]"},
      {R"({"repetition_penalty": 0})", "'repetition_penalty': must be > 0"},
  };
  for (const auto& [text, fragment] : cases) {
    try {
      read(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCheckpoint);
      const std::string message = e.what();
      EXPECT_NE(message.find("generation_config.json"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace canrun
