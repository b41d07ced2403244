// The model program: what the compile step and the planner derive from it (every weight read
// once per forward pass, a buffer plan that never lets two live values share memory), and a new
// block kind — a toy one defined here, with a per-sequence state of its own — plugging into a
// real model without touching the other block kinds or the executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "blocks/block_kind.h"
#include "blocks/decoder_program.h"
#include "program/buffer_plan.h"
#include "program/checkpoint_loader.h"
#include "program/executor.h"
#include "runtime/model_config.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models";

// Every step's first and last use of each value, as the buffer plan must see them.
std::vector<std::pair<int, int>> live_ranges(const Program& program) {
  std::vector<std::pair<int, int>> ranges(program.values().size(), {-1, -1});
  for (size_t s = 0; s < program.steps().size(); ++s)
    for (const auto* ids : {&program.steps()[s]->inputs(), &program.steps()[s]->outputs()})
      for (ValueId id : *ids) {
        auto& [first, last] = ranges[static_cast<size_t>(id)];
        if (first < 0) first = static_cast<int>(s);
        last = static_cast<int>(s);
      }
  return ranges;
}

TEST(ModelProgram, EveryWeightOncePerPassAndBuffersThatNeverOverlapWhileLive) {
  for (const char* fixture : {"llama_f32", "qwen3_moe", "gpt_neox", "deepseek_v2", "gemma3_text"}) {
    SCOPED_TRACE(fixture);
    const Program program = decoder_program_shape(read_model_spec((kFixtures / fixture).string()));
    const StepCost prefill = program.cost({16, 16}), decode = program.cost({1, 64});
    EXPECT_EQ(prefill.weight_bytes, decode.weight_bytes);
    EXPECT_GT(prefill.flops, 8 * decode.flops);
    const auto ranges = live_ranges(program);
    for (int64_t tokens : {16, 1}) {
      const BufferPlan plan = plan_buffers(program, tokens);
      EXPECT_LE(plan.arena_bytes, plan.total_bytes);
      int64_t widest_step = 0;  // what one step's live values need at once: a lower bound
      for (size_t s = 0; s < program.steps().size(); ++s) {
        int64_t live = 0;
        for (size_t v = 0; v < ranges.size(); ++v)
          if (ranges[v].first <= static_cast<int>(s) && static_cast<int>(s) <= ranges[v].second) live += plan.bytes[v];
        widest_step = std::max(widest_step, live);
      }
      EXPECT_GE(plan.arena_bytes, widest_step);
      for (size_t a = 0; a < ranges.size(); ++a)
        for (size_t b = a + 1; b < ranges.size(); ++b) {
          const bool live_together = ranges[a].first <= ranges[b].second && ranges[b].first <= ranges[a].second;
          const bool share = plan.offsets[a] < plan.offsets[b] + plan.bytes[b] &&
                             plan.offsets[b] < plan.offsets[a] + plan.bytes[a];
          ASSERT_FALSE(live_together && share && plan.bytes[a] > 0 && plan.bytes[b] > 0)
              << program.values()[a].name << " and " << program.values()[b].name;
        }
    }
  }
}

// A toy feed-forward block with a recurrent state: each token's output is the mean of the
// inputs at every position up to its own. The running sum is its per-sequence state, carried
// from one run to the next as a KV cache is.
class RunningSum : public BlockState {
 public:
  explicit RunningSum(int64_t width) : sum(static_cast<size_t>(width)) {}
  int64_t bytes() const override { return static_cast<int64_t>(sum.size() * sizeof(double)); }
  std::vector<double> sum;
};

class CausalMeanStep : public Step {
 public:
  CausalMeanStep(Info info, int slot) : Step(std::move(info)), slot_(slot) {}
  std::string_view kind() const override { return "causal_mean"; }
  void run(StepContext& c) const override {
    RunningSum& state = c.state().get<RunningSum>(slot_);
    const int64_t width = c.width(inputs()[0]);
    for (int64_t t = 0; t < c.count(); ++t)
      for (int64_t j = 0; j < width; ++j) {
        state.sum[static_cast<size_t>(j)] += c.value(inputs()[0])[t * width + j];
        c.value(outputs()[0])[t * width + j] = static_cast<float>(state.sum[static_cast<size_t>(j)] / (c.start() + t + 1));
      }
  }

 private:
  int slot_;
};

class CausalMean : public Block {
 public:
  explicit CausalMean(const BlockPlace& place) : place_(place) {}
  void visit(TensorVisitor&) override {}  // no weights
  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const int64_t width = place_.spec.hidden_size;
    const int slot = program.state({place_.steps + "running_sum", [=](const StateShape&) { return width * 8; },
                                    [=](const StateShape&) { return std::make_unique<RunningSum>(width); }});
    program.add<CausalMeanStep>(Step::Info{place_.steps + "causal_mean", {io.in}, {io.out}}, slot);
  }

 private:
  BlockPlace place_;
};

const BlockKindRegistration kCausalMean("toy_causal_mean",
                                        [](const BlockPlace& place) { return std::make_unique<CausalMean>(place); });

TEST(ModelProgram, ANewBlockKindPlugsIntoARealModel) {
  const std::string dir = (kFixtures / "llama_f32").string();
  const DecoderSpec original = read_model_spec(dir);
  DecoderSpec spec = original;
  spec.ffn_kinds = {"dense_mlp", "toy_causal_mean"};  // layer 1's MLP becomes the toy
  const WeightStore store = WeightStore::open_folder(dir);
  CheckpointLoader loader(store, spec.conv1d, spec.fp8, spec.packed_int);
  const Program program = build_decoder_program(spec, {}, loader);
  CheckpointLoader original_loader(store, original.conv1d, original.fp8, original.packed_int);
  const Program unchanged = build_decoder_program(original, {}, original_loader);

  // The other blocks are as they were; the toy's step stands where layer 1's MLP stood.
  ASSERT_NE(program.find_step("layers.1.causal_mean"), nullptr);
  EXPECT_EQ(program.find_step("layers.1.down_proj"), nullptr);
  const std::vector<std::string> replaced = {"layers.1.up_proj", "layers.1.gate_proj", "layers.1.act_mul",
                                             "layers.1.down_proj"};
  for (const auto& step : unchanged.steps()) {
    const bool mlp = std::find(replaced.begin(), replaced.end(), step->name()) != replaced.end();
    EXPECT_EQ(program.find_step(step->name()) != nullptr, !mlp) << step->name();
  }
  EXPECT_EQ(program.state_slots().size(), unchanged.state_slots().size() + 1);
  EXPECT_EQ(program.state_bytes({8}), unchanged.state_bytes({8}) + spec.hidden_size * 8);

  // The executor runs it unchanged, and the toy's state carries from the prompt to the next
  // token: one decode step after five prompt tokens equals a prefill of all six.
  const Executor executor(program, ref_kernels(), *single_process_communicator());
  const std::vector<int32_t> tokens = {1, 612, 511, 618, 308, 42};
  Arena arena;
  SequenceState stepped = program.make_state({8});
  executor.run(std::span(tokens).first(5), 0, {plan_buffers(program, 5)}, stepped, arena);
  const std::vector<float> decoded = executor.run(std::span(tokens).last(1), 5, {plan_buffers(program, 1)}, stepped, arena);
  SequenceState whole = program.make_state({8});
  const std::vector<float> prefilled = executor.run(tokens, 0, {plan_buffers(program, 6)}, whole, arena);
  ASSERT_EQ(decoded.size(), prefilled.size());
  for (size_t i = 0; i < decoded.size(); ++i) ASSERT_NEAR(decoded[i], prefilled[i], 1e-5f) << i;
  // And it changed the model: the logits differ from the unchanged program's.
  SequenceState plain = unchanged.make_state({8});
  const Executor plain_executor(unchanged, ref_kernels(), *single_process_communicator());
  EXPECT_NE(plain_executor.run(tokens, 0, {plan_buffers(unchanged, 6)}, plain, arena), prefilled);
}

// The state a block kind keeps besides the KV cache (lfm2's convolution inputs, deepseek_v32's
// indexer keys, glm_moe_dsa's choice that a later layer reuses, deepseek_v4's window keys,
// open windows and compressed keys, the Gated DeltaNet's and
// Mamba-2's recurrent states), and a KV cache a later layer reads (gemma4's shared keys and
// values), carries across runs: a prompt prefilled in pieces, then decoded one
// token at a time, ends on the logits of one prefill of the whole.
TEST(ModelProgram, StatefulBlockKindsCarryTheirStateAcrossRuns) {
  for (const char* fixture : {"lfm2", "deepseek_v32", "deepseek_v4", "glm_moe_dsa", "qwen3_5_text", "nemotron_h",
                              "granitemoehybrid", "falcon_h1", "gemma4_text_ple"}) {
    SCOPED_TRACE(fixture);
    const std::string dir = (kFixtures / fixture).string();
    DecoderSpec spec = read_model_spec(dir);
    // Mamba-2's dt floor applies to prefills only, as in transformers; without it the one-token
    // runs compute what the prefill of the whole does.
    spec.mamba.dt_min = 0.0f;
    const WeightStore store = WeightStore::open_folder(dir);
    CheckpointLoader loader(store, spec.conv1d, spec.fp8, spec.packed_int);
    const Program program = build_decoder_program(spec, {}, loader);
    const Executor executor(program, ref_kernels(), *single_process_communicator());
    const std::vector<int32_t> tokens = {1, 61, 251, 18, 308, 42, 7, 199, 350, 12, 77, 5, 260};
    const int64_t n = static_cast<int64_t>(tokens.size());
    Arena arena;
    SequenceState pieces = program.make_state({16});
    std::vector<float> last;
    int64_t start = 0;
    for (int64_t length : {5, 3, 2, 1, 1, 1}) {
      last = executor.run(std::span(tokens).subspan(start, length), start, {plan_buffers(program, length)}, pieces,
                          arena);
      start += length;
    }
    ASSERT_EQ(start, n);
    SequenceState whole = program.make_state({16});
    const std::vector<float> at_once = executor.run(tokens, 0, {plan_buffers(program, n)}, whole, arena);
    ASSERT_EQ(last.size(), at_once.size());
    for (size_t i = 0; i < last.size(); ++i) ASSERT_NEAR(last[i], at_once[i], 1e-4f) << i;
  }
}

}  // namespace
}  // namespace canrun
