// The compile step on the committed tiny checkpoints: plans go to the plan cache and come back
// from it bit for bit; a corrupt plan is rebuilt, never used; a new prompt bucket is one
// recompilation (the shard layout is part of the key: tests/e2e/test_sharded_parity.py); the graphs account for every weight and the buffer plan never lets two live
// activations share memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compile/compiler.h"
#include "compile/forward_graph.h"
#include "kernels/cpu/panel_choices.h"
#include "plan/plan_cache.h"
#include "runtime/generate.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models";

class CompileTest : public testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("canrun_compile_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
              std::to_string(::getpid()));
    fs::remove_all(cache_);
    cpu::clear_panel_choices();
  }
  void TearDown() override { fs::remove_all(cache_); }

  CompileOptions options() const {
    CompileOptions o;
    o.cache_dir = cache_;
    o.buckets = {8, 16, 64};
    return o;
  }

  // Greedy tokens and prompt logits of `fixture` compiled with `o`, and the compile stats.
  struct Run {
    GenerationResult result;
    CompileStats stats;
  };
  Run run(const std::string& fixture, const CompileOptions& o, std::span<const int32_t> prompt) const {
    LoadedModel loaded = load_model((kFixtures / fixture).string(), Backend::kCpu, single_process_communicator(), false);
    auto compiled = compile_loaded(loaded, o);
    GenerationOptions g;
    g.max_new_tokens = 8;
    g.cache_capacity = compiled->prepare(static_cast<int64_t>(prompt.size()), 8).cache_capacity;
    return {generate_greedy(*loaded.model, prompt, g), compiled->stats()};
  }

  fs::path cache_;
};

const std::vector<int32_t> kPrompt = {1, 5, 9, 13, 2};

TEST_F(CompileTest, SecondRunLoadsThePlanFromTheCacheWithTheSameResults) {
  const Run cold = run("qwen3_bf16", options(), kPrompt);
  EXPECT_EQ(cold.stats.compilations, 2);  // packed weights + the bucket's graph
  EXPECT_EQ(cold.stats.cache_hits, 0);
  EXPECT_GT(cold.stats.plan_bytes, 0);
  EXPECT_GT(cold.stats.peak_activation_bytes, 0);
  EXPECT_EQ(cold.stats.buckets, std::vector<int64_t>{8});

  const Run warm = run("qwen3_bf16", options(), kPrompt);
  EXPECT_EQ(warm.stats.compilations, 0);
  EXPECT_EQ(warm.stats.cache_hits, 2);
  EXPECT_EQ(warm.stats.plan_bytes, cold.stats.plan_bytes);
  EXPECT_EQ(warm.result.tokens, cold.result.tokens);
  EXPECT_EQ(warm.result.prompt_logits, cold.result.prompt_logits);  // bit for bit
  EXPECT_EQ(PlanCache(cache_).list(false, true).size(), 2u);
}

TEST_F(CompileTest, CorruptPackedWeightsAreRebuiltNotUsed) {
  const Run cold = run("llama_f32", options(), kPrompt);
  for (const PlanEntryInfo& entry : PlanCache(cache_).list(false, false)) {
    const fs::path weights = entry.dir / "weights.bin";
    if (!fs::exists(weights)) continue;
    std::fstream file(weights, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('\x7f');
  }
  const Run again = run("llama_f32", options(), kPrompt);
  EXPECT_EQ(again.stats.compilations, 1);  // the weights; the graph entry was intact
  EXPECT_EQ(again.stats.cache_hits, 1);
  EXPECT_EQ(again.result.prompt_logits, cold.result.prompt_logits);
}

TEST_F(CompileTest, ANewBucketIsOneRecompilation) {
  LoadedModel loaded = load_model((kFixtures / "llama_f32").string(), Backend::kCpu, single_process_communicator(), false);
  auto compiled = compile_loaded(loaded, options());
  EXPECT_EQ(compiled->prepare(5, 8).bucket, 8);
  EXPECT_EQ(compiled->prepare(8, 8).bucket, 8);  // same bucket: nothing new
  EXPECT_EQ(compiled->stats().recompilations, 0);
  const CompiledModel::Shape longer = compiled->prepare(20, 8);
  EXPECT_EQ(longer.bucket, 64);
  EXPECT_GE(longer.cache_capacity, 64 + 8);
  EXPECT_EQ(compiled->stats().recompilations, 1);
  EXPECT_EQ(compiled->stats().buckets, (std::vector<int64_t>{8, 64}));
  try {
    compiled->prepare(65, 1);
    FAIL() << "a prompt past the largest bucket must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--buckets"), std::string::npos);
  }
}

TEST_F(CompileTest, WithoutTheCacheNothingIsWritten) {
  CompileOptions o = options();
  o.use_cache = false;
  const Run r = run("llama_f32", o, kPrompt);
  EXPECT_EQ(r.stats.compilations, 2);
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(CompileTest, TheRefBackendIsNotCompiled) {
  LoadedModel loaded = load_model((kFixtures / "llama_f32").string(), Backend::kRef);
  EXPECT_THROW(compile_loaded(loaded, options()), Error);
}

TEST(PromptBuckets, ParseAscendingPositiveLengths) {
  EXPECT_EQ(parse_prompt_buckets("32,128,512", "--buckets"), (std::vector<int64_t>{32, 128, 512}));
  for (const char* bad : {"", "32,,64", "64,32", "0,4", "-1", "12x", "32,32"})
    EXPECT_THROW(parse_prompt_buckets(bad, "--buckets"), Error) << bad;
  EXPECT_EQ(default_prompt_buckets().front(), 16);
}

TEST(ForwardGraph, AccountsForEveryWeightAndPlansNonOverlappingBuffers) {
  for (const char* fixture : {"llama_f32", "qwen3_moe", "gpt_neox", "deepseek_v2"}) {
    SCOPED_TRACE(fixture);
    LoadedModel loaded = load_model((kFixtures / fixture).string(), Backend::kCpu);
    const DecoderModel& model = *loaded.model;
    const ForwardGraph prefill = build_forward_graph(model.spec(), model.weights(), 16, 16, 1);
    const ForwardGraph decode = build_forward_graph(model.spec(), model.weights(), 1, 64, 1);
    EXPECT_EQ(prefill.weight_bytes(), decode.weight_bytes());  // every weight read once per forward
    EXPECT_GT(prefill.flops(), 8 * decode.flops());
    for (const ForwardGraph* graph : {&prefill, &decode}) {
      const BufferPlan plan = plan_buffers(*graph);
      EXPECT_LE(plan.arena_bytes, plan.total_bytes);
      int64_t widest_op = 0;  // what one op's live values need at once: a lower bound
      for (size_t op = 0; op < graph->ops.size(); ++op) {
        int64_t live = 0;
        for (const GraphValue& v : graph->values)
          if (v.first <= static_cast<int>(op) && static_cast<int>(op) <= v.last) live += v.bytes;
        widest_op = std::max(widest_op, live);
      }
      EXPECT_GE(plan.arena_bytes, widest_op);
      for (size_t a = 0; a < graph->values.size(); ++a)
        for (size_t b = a + 1; b < graph->values.size(); ++b) {
          const GraphValue &va = graph->values[a], &vb = graph->values[b];
          const bool live_together = va.first <= vb.last && vb.first <= va.last;
          const bool share = plan.offsets[a] < plan.offsets[b] + vb.bytes && plan.offsets[b] < plan.offsets[a] + va.bytes;
          ASSERT_FALSE(live_together && share) << va.name << " and " << vb.name;
        }
    }
  }
}

}  // namespace
}  // namespace canrun
