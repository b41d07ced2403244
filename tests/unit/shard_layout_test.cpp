// The split of a model over the ranks of a sharded run: contiguous, as even as possible, the
// first ranks taking one more; a rank may own nothing; every rank's weights hold its part only.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "blocks/decoder_program.h"
#include "blocks/steps.h"
#include "parallel/shard_layout.h"
#include "program/checkpoint_loader.h"
#include "runtime/model_config.h"
#include "util/error.h"

namespace canrun {
namespace {

std::vector<IndexRange> all_ranks(int64_t total, int size) {
  std::vector<IndexRange> ranges;
  for (int rank = 0; rank < size; ++rank) ranges.push_back(split_evenly(total, {rank, size}));
  return ranges;
}

void expect_ranges(const std::vector<IndexRange>& ranges, const std::vector<std::pair<int64_t, int64_t>>& expected) {
  ASSERT_EQ(ranges.size(), expected.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].first, expected[i].first) << "rank " << i;
    EXPECT_EQ(ranges[i].count, expected[i].second) << "rank " << i;
  }
}

TEST(ShardLayout, EvenSplit) { expect_ranges(all_ranks(8, 4), {{0, 2}, {2, 2}, {4, 2}, {6, 2}}); }

TEST(ShardLayout, UnevenSplitGivesTheFirstRanksOneMore) {
  expect_ranges(all_ranks(3, 2), {{0, 2}, {2, 1}});
  expect_ranges(all_ranks(1536, 4), {{0, 384}, {384, 384}, {768, 384}, {1152, 384}});
  expect_ranges(all_ranks(10, 4), {{0, 3}, {3, 3}, {6, 2}, {8, 2}});
}

TEST(ShardLayout, MoreRanksThanItemsLeavesSomeWithNone) {
  expect_ranges(all_ranks(3, 4), {{0, 1}, {1, 1}, {2, 1}, {3, 0}});
}

TEST(ShardLayout, QueryHeadsFollowTheirKvHeadGroups) {
  DecoderSpec spec;  // SmolLM2-135M: 9 query heads in 3 groups
  spec.num_heads = 9;
  spec.num_kv_heads = 3;
  spec.intermediate_size = 1536;
  const ShardLayout first = shard_layout(spec, {0, 2}, 0), second = shard_layout(spec, {1, 2}, 0);
  EXPECT_EQ(first.kv_heads.count, 2);
  EXPECT_EQ(first.query_heads.first, 0);
  EXPECT_EQ(first.query_heads.count, 6);
  EXPECT_EQ(second.kv_heads.first, 2);
  EXPECT_EQ(second.query_heads.first, 6);
  EXPECT_EQ(second.query_heads.count, 3);
  const ShardLayout last_of_four = shard_layout(spec, {3, 4}, 0);
  EXPECT_EQ(last_of_four.kv_heads.count, 0);
  EXPECT_EQ(last_of_four.query_heads.count, 0);
  EXPECT_EQ(last_of_four.ffn.count, 384);
}

TEST(ShardLayout, ExpertsSplitAcrossRanks) {
  DecoderSpec spec;
  spec.num_heads = spec.num_kv_heads = 4;
  spec.moe.num_experts = 6;
  spec.moe.shared_ffn = 16;
  expect_ranges({shard_layout(spec, {0, 4}, 0).experts, shard_layout(spec, {1, 4}, 0).experts,
                 shard_layout(spec, {2, 4}, 0).experts, shard_layout(spec, {3, 4}, 0).experts},
                {{0, 2}, {2, 2}, {4, 1}, {5, 1}});
  EXPECT_EQ(shard_layout(spec, {3, 4}, 0).shared_ffn.first, 12);
  EXPECT_EQ(shard_layout(spec, {3, 4}, 0).shared_ffn.count, 4);
}

TEST(ShardLayout, UnsplittableOptionsAreRejectedByName) {
  DecoderSpec spec;
  spec.model_type = "olmo2";
  spec.qk_norm_kind = QkNorm::kWhole;
  EXPECT_NO_THROW(check_shardable(spec, 1));
  try {
    check_shardable(spec, 2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupportedOption);
    EXPECT_NE(std::string(e.what()).find("olmo2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--cores 1"), std::string::npos) << e.what();
  }
}

// A rank's weights: its heads' q/k/v rows and o_proj columns, its intermediate columns, and
// the output biases on rank 0 only.
TEST(ShardLayout, RankWeightsHoldTheirPartOnly) {
  const std::string dir = (std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/qwen2").string();
  const DecoderSpec spec = read_model_spec(dir);
  const WeightStore store = WeightStore::open_folder(dir);
  const Shard shard{1, 2};
  const ShardLayout layout = shard_layout(spec, shard, 0);
  CheckpointLoader loader(store, spec.conv1d, spec.fp8, spec.packed_int);
  const Program rank = build_decoder_program(spec, shard, loader);
  const auto matrix = [](const Program& program, const char* name) -> const WeightMatrix& {
    const WeightMatrix* m = program.find_matrix(name);
    if (m == nullptr) throw std::runtime_error(std::string("no matrix ") + name);
    return *m;
  };
  EXPECT_EQ(matrix(rank, "layers.0.q_proj").rows(), layout.query_heads.count * spec.head_dim);
  EXPECT_EQ(matrix(rank, "layers.0.k_proj").rows(), layout.kv_heads.count * spec.head_dim);
  const auto* k_proj = dynamic_cast<const LinearStep*>(rank.find_step("layers.0.k_proj"));
  ASSERT_NE(k_proj, nullptr);
  EXPECT_EQ(static_cast<int64_t>(k_proj->bias().size()), layout.kv_heads.count * spec.head_dim);
  EXPECT_EQ(matrix(rank, "layers.0.o_proj").rows(), spec.hidden_size);
  EXPECT_EQ(matrix(rank, "layers.0.o_proj").cols(), layout.query_heads.count * spec.head_dim);
  EXPECT_EQ(matrix(rank, "layers.0.gate_proj").rows(), layout.ffn.count);
  EXPECT_EQ(matrix(rank, "layers.0.down_proj").cols(), layout.ffn.count);
  EXPECT_EQ(matrix(rank, "lm_head").rows(), spec.vocab_size);

  const Program whole = build_decoder_program(spec, Shard{}, loader);
  const WeightMatrix& full_down = matrix(whole, "layers.0.down_proj");
  const int64_t row = 1;
  std::vector<float> part_row(static_cast<size_t>(layout.ffn.count));
  std::vector<float> full_row(static_cast<size_t>(spec.intermediate_size));
  matrix(rank, "layers.0.down_proj").copy_row(row, part_row.data());
  full_down.copy_row(row, full_row.data());
  EXPECT_EQ(part_row[0], full_row[static_cast<size_t>(layout.ffn.first)]);
}

}  // namespace
}  // namespace canrun
