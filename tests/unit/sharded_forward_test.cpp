// The sharded forward pass without MPI: N threads, one per rank, each loading its part of a
// fixture and summing partial outputs through an in-process communicator; the logits must
// match the unsharded model's to rounding (the partial sums add in another order).
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <filesystem>
#include <thread>

#include "runtime/session.h"
#include "encoder_fixtures.h"

namespace canrun {
namespace {

// The ranks of one run as threads of this process, meeting at a barrier for each collective.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size), barrier_(size), slots_(static_cast<size_t>(size)) {}
  int size() const { return size_; }

  void all_reduce_sum(int rank, float* values, int64_t count) {
    slots_[static_cast<size_t>(rank)].assign(values, values + count);
    barrier_.arrive_and_wait();
    for (int64_t i = 0; i < count; ++i) {
      float sum = 0;
      for (const std::vector<float>& slot : slots_) sum += slot[static_cast<size_t>(i)];
      values[i] = sum;
    }
    barrier_.arrive_and_wait();
  }
  void broadcast(int rank, int32_t* values, int64_t count, int root) {
    if (rank == root) ids_.assign(values, values + count);
    barrier_.arrive_and_wait();
    std::copy(ids_.begin(), ids_.end(), values);
    barrier_.arrive_and_wait();
  }

 private:
  int size_;
  std::barrier<> barrier_;
  std::vector<std::vector<float>> slots_;
  std::vector<int32_t> ids_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  void all_reduce_sum(float* values, int64_t count) override { group_.all_reduce_sum(rank_, values, count); }
  void broadcast(int32_t* values, int64_t count, int root) override {
    group_.broadcast(rank_, values, count, root);
  }

 private:
  ThreadGroup& group_;
  int rank_;
};

std::string fixture(const std::string& name) {
  return (std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models" / name).string();
}

// Prefill of a few tokens, then one decode step: the logits of both.
std::vector<float> run(const Session& session) {
  const std::vector<int32_t> prompt = {3, 17, 42, 5, 99};
  const Program& program = session.program();
  const Executor executor(program, kernels_for(session.backend()), session.communicator());
  SequenceState state = program.make_state({8});
  Arena arena;
  std::vector<float> logits = executor.run(prompt, 0, {plan_buffers(program, 5)}, state, arena);
  const int32_t next = 7;
  const std::vector<float> step =
      executor.run({&next, 1}, static_cast<int64_t>(prompt.size()), {plan_buffers(program, 1)}, state, arena);
  logits.insert(logits.end(), step.begin(), step.end());
  return logits;
}

class ShardedForwardTest : public testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ShardedForwardTest, LogitsMatchTheUnshardedModel) {
  // Named, not a structured binding: the rank threads' lambda captures them.
  const std::string& name = std::get<0>(GetParam());
  const int cores = std::get<1>(GetParam());
  const std::vector<float> expected = run(Session(fixture(name), uncompiled(Backend::kRef)));
  ThreadGroup group(cores);
  std::vector<std::vector<float>> got(static_cast<size_t>(cores));
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < cores; ++rank)
    ranks.emplace_back([&, rank] {
      const Session session(fixture(name), uncompiled(Backend::kRef, std::make_shared<ThreadCommunicator>(group, rank)));
      EXPECT_EQ(session.communicator().rank(), rank);
      got[static_cast<size_t>(rank)] = run(session);
    });
  for (std::thread& rank : ranks) rank.join();
  for (int rank = 0; rank < cores; ++rank) {
    const std::vector<float>& logits = got[static_cast<size_t>(rank)];
    ASSERT_EQ(logits.size(), expected.size());
    for (size_t i = 0; i < logits.size(); ++i)
      ASSERT_NEAR(logits[i], expected[i], 1e-4f * (1.0f + std::fabs(expected[i]))) << "rank " << rank << " logit " << i;
  }
}

// One fixture per way of splitting: grouped-query heads, fused per-head and concatenated
// q/k/v, Conv1D, parallel residual, attention sinks with 3-D experts, routed and shared
// experts, latent attention, sigmoid-routed (noaux_tc) experts with a sparse attention
// indexer, convolution channels, Mamba-2 groups (2: the third and fourth rank hold none), Gated
// DeltaNet key heads (2) beside gated attention, as published and grouped per key head, chunked
// attention with 3-D experts, q/k norms after the rotation, xIELU, experts chosen with a
// softmax score bias, kv heads and sinks that differ by layer, Mamba-2 beside attention, head
// widths and kv heads that differ by layer with keys as values, experts beside the dense MLP,
// per-layer inputs and caches shared across layers, one key head on the first rank beside
// hyper-connected streams, packed int4 and int8 matrices (compressed-tensors and GPTQ) cut inside
// their groups of inputs.
INSTANTIATE_TEST_SUITE_P(Fixtures, ShardedForwardTest,
                         testing::Combine(testing::Values("qwen2", "llama_f32", "gpt_neox", "phi3", "gpt2", "phi",
                                                          "gpt_oss", "qwen2_moe", "qwen3_moe", "deepseek_v2",
                                                          "deepseek_v3", "deepseek_v3_fp8", "deepseek_v32", "glm_moe_dsa", "lfm2",
                                                          "nemotron_h", "granitemoehybrid", "qwen3_5_text", "qwen3_5_moe_text",
                                                          "qwen3_next", "llama4_text", "hunyuan_v1_dense", "apertus", "ernie4_5_moe",
                                                          "mimo_v2_flash", "glm4_moe", "falcon_h1",
                                                          "gemma4_text", "gemma4_text_moe", "gemma4_text_ple",
                                                          "deepseek_v4", "llama_w4a16", "qwen2_w8a16", "llama_gptq_int4",
                                                          "llama_gptq_int8"),
                                          testing::Values(2, 3, 4)),
                         [](const testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_cores" + std::to_string(std::get<1>(info.param));
                         });

// An encoder's hidden states over an unpadded batch, sharded as a decoder's layers are: every
// fixture of tools/make_encoder_fixtures.py, each rank holding its heads and MLP columns.
class ShardedEncoderTest : public testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ShardedEncoderTest, HiddenStatesMatchTheUnshardedEncoder) {
  const auto& [name, cores] = GetParam();
  const std::string folder = encoder_fixtures::folder(name);
  const std::vector<int32_t> first = {2, 10, 11, 12, 13, 3}, second = {2, 20, 21, 3};
  const std::vector<EncoderInput> inputs = {{first, {}}, {second, {}}};
  Session unsharded(folder, uncompiled(Backend::kRef));
  const std::vector<float> expected = unsharded.encode(inputs);
  ThreadGroup group(cores);
  std::vector<std::vector<float>> got(static_cast<size_t>(cores));
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < cores; ++rank)
    ranks.emplace_back([&, rank] {
      Session session(folder, uncompiled(Backend::kRef, std::make_shared<ThreadCommunicator>(group, rank)));
      got[static_cast<size_t>(rank)] = session.encode(inputs);
    });
  for (std::thread& rank : ranks) rank.join();
  for (int rank = 0; rank < cores; ++rank) {
    const std::vector<float>& hidden = got[static_cast<size_t>(rank)];
    ASSERT_EQ(hidden.size(), expected.size());
    for (size_t i = 0; i < hidden.size(); ++i)
      ASSERT_NEAR(hidden[i], expected[i], 1e-4f * (1.0f + std::fabs(expected[i]))) << "rank " << rank << " value " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ShardedEncoderTest,
                         testing::Combine(testing::ValuesIn(encoder_fixtures::kNames), testing::Values(2, 3)),
                         [](const testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_cores" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace canrun
