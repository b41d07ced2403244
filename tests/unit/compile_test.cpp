// The compile step on the committed tiny checkpoints: plans go to the plan cache and come back
// from it bit for bit; a corrupt plan is rebuilt, never used; a new prompt bucket is one
// recompilation (the shard layout is part of the key: tests/e2e/test_sharded_parity.py); keys
// are the model's content, so a copy of the model in another folder hits and a changed weight
// misses; the packed weights are one entry shared by every bucket.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan/plan_cache.h"
#include "runtime/session.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models";

class CompileTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("canrun_compile_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::remove_all(root_);
    cache_ = root_ / "plans";
  }
  void TearDown() override { fs::remove_all(root_); }

  SessionOptions options() const {
    SessionOptions o;
    o.compile = CompileOptions{};
    o.compile->cache_dir = cache_;
    o.compile->buckets = {8, 16, 64};
    return o;
  }

  // Greedy tokens and prompt logits of the model in `dir` compiled with `o`, and the compile stats.
  struct Run {
    GenerationResult result;
    CompileStats stats;
  };
  Run run(const fs::path& dir, const SessionOptions& o, std::span<const int32_t> prompt) const {
    Session session(dir.string(), o);
    GenerateRequest request;
    request.max_new_tokens = 8;
    GenerationResult result = session.generate(prompt, request);
    return {std::move(result), session.compiled()->stats()};
  }

  // A copy of fixture `name` under this test's folder.
  fs::path copy_of(const std::string& name, const std::string& folder) const {
    const fs::path dir = root_ / folder;
    fs::create_directories(dir);
    fs::copy(kFixtures / name, dir, fs::copy_options::recursive);
    return dir;
  }

  fs::path root_, cache_;
};

const std::vector<int32_t> kPrompt = {1, 5, 9, 13, 2};

TEST_F(CompileTest, SecondRunLoadsThePlanFromTheCacheWithTheSameResults) {
  const Run cold = run(kFixtures / "qwen3_bf16", options(), kPrompt);
  EXPECT_EQ(cold.stats.compilations, 2);  // packed weights + the bucket's plans
  EXPECT_EQ(cold.stats.cache_hits, 0);
  EXPECT_GT(cold.stats.plan_bytes, 0);
  EXPECT_GT(cold.stats.peak_activation_bytes, 0);
  EXPECT_EQ(cold.stats.buckets, std::vector<int64_t>{8});

  const Run warm = run(kFixtures / "qwen3_bf16", options(), kPrompt);
  EXPECT_EQ(warm.stats.compilations, 0);
  EXPECT_EQ(warm.stats.cache_hits, 2);
  EXPECT_EQ(warm.stats.plan_bytes, cold.stats.plan_bytes);
  EXPECT_EQ(warm.result.tokens, cold.result.tokens);
  EXPECT_EQ(warm.result.prompt_logits, cold.result.prompt_logits);  // bit for bit
  EXPECT_EQ(PlanCache(cache_).list(false, true).size(), 2u);
}

TEST_F(CompileTest, ACopyOfTheModelInAnotherFolderFindsItsPlans) {
  const fs::path first = copy_of("llama_f32", "first");
  const Run cold = run(first, options(), kPrompt);
  EXPECT_EQ(cold.stats.compilations, 2);
  // Byte for byte the same model, in another folder with other times: the same plans.
  const fs::path second = copy_of("llama_f32", "elsewhere/second");
  fs::last_write_time(second / "model.safetensors", fs::last_write_time(first / "model.safetensors") - std::chrono::hours(1));
  const Run copied = run(second, options(), kPrompt);
  EXPECT_EQ(copied.stats.compilations, 0);
  EXPECT_EQ(copied.stats.cache_hits, 2);
  EXPECT_EQ(copied.result.prompt_logits, cold.result.prompt_logits);
}

TEST_F(CompileTest, AChangedWeightMissesEvenWithItsOldTime) {
  const fs::path dir = copy_of("llama_f32", "model");
  run(dir, options(), kPrompt);
  const fs::path weights = dir / "model.safetensors";
  const auto time = fs::last_write_time(weights);
  {
    std::fstream file(weights, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(weights) - 4));  // the last weight's last byte
    file.put('\x3f');
  }
  fs::last_write_time(weights, time);
  const Run changed = run(dir, options(), kPrompt);
  EXPECT_EQ(changed.stats.compilations, 2);  // new content: new packed weights and plans
}

TEST_F(CompileTest, CorruptPackedWeightsAreRebuiltNotUsed) {
  const Run cold = run(kFixtures / "llama_f32", options(), kPrompt);
  for (const PlanEntryInfo& entry : PlanCache(cache_).list(false, false)) {
    const fs::path weights = entry.dir / "weights.bin";
    if (!fs::exists(weights)) continue;
    std::fstream file(weights, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('\x7f');
  }
  const Run again = run(kFixtures / "llama_f32", options(), kPrompt);
  EXPECT_EQ(again.stats.compilations, 1);  // the weights; the bucket's entry was intact
  EXPECT_EQ(again.stats.cache_hits, 1);
  EXPECT_EQ(again.result.prompt_logits, cold.result.prompt_logits);
}

TEST_F(CompileTest, ANewBucketIsOneRecompilationSharingThePackedWeights) {
  Session session((kFixtures / "llama_f32").string(), options());
  EXPECT_EQ(session.prepare(5, 8).bucket, 8);
  EXPECT_EQ(session.prepare(8, 8).bucket, 8);  // same bucket: nothing new
  EXPECT_EQ(session.compiled()->stats().recompilations, 0);
  const CompiledModel::Shape longer = session.prepare(20, 8);
  EXPECT_EQ(longer.bucket, 64);
  EXPECT_GE(longer.cache_capacity, 64 + 8);
  EXPECT_EQ(session.compiled()->stats().recompilations, 1);
  EXPECT_EQ(session.compiled()->stats().buckets, (std::vector<int64_t>{8, 64}));
  int weights = 0, shapes = 0;
  for (const PlanEntryInfo& entry : PlanCache(cache_).list(false, false))
    ++(entry.manifest.at("key").at("kind") == "weights" ? weights : shapes);
  EXPECT_EQ(weights, 1);  // one packed copy for both buckets
  EXPECT_EQ(shapes, 2);
  try {
    session.prepare(65, 1);
    FAIL() << "a prompt past the largest bucket must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--buckets"), std::string::npos);
  }
}

TEST_F(CompileTest, WithoutTheCacheNothingIsWritten) {
  SessionOptions o = options();
  o.compile->use_cache = false;
  const Run r = run(kFixtures / "llama_f32", o, kPrompt);
  EXPECT_EQ(r.stats.compilations, 2);
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(CompileTest, TheRefBackendIsNotCompiled) {
  SessionOptions o = options();
  o.backend = Backend::kRef;
  const Session session((kFixtures / "llama_f32").string(), o);
  EXPECT_EQ(session.compiled(), nullptr);
  EXPECT_FALSE(fs::exists(cache_));
}

TEST(PromptBuckets, ParseAscendingPositiveLengths) {
  EXPECT_EQ(parse_prompt_buckets("32,128,512", "--buckets"), (std::vector<int64_t>{32, 128, 512}));
  for (const char* bad : {"", "32,,64", "64,32", "0,4", "-1", "12x", "32,32"})
    EXPECT_THROW(parse_prompt_buckets(bad, "--buckets"), Error) << bad;
  EXPECT_EQ(default_prompt_buckets().front(), 16);
}

}  // namespace
}  // namespace canrun
