// cpu::attend against ref::attend (double sums) on random queries, keys and values: windows
// that start past 0, a value width that is not a multiple of the vector width, soft-capping and
// a sink, over f32, bf16 and f16 caches (both read the same stored values). Scores and
// probabilities are f32 in both; the cpu sums in f32, so the outputs (each a convex mix of
// values in [-1, 1]) agree to about 1e-6; the test allows 1e-5. The same for a whole
// not-causal attention in tiles against ref::attention.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/ref/ops.h"
#include "random_values.h"
#include "tensor/dtype.h"

namespace canrun {
namespace {

struct Case {
  int64_t key_dim, value_dim, first, last;
  float softcap;
  bool sink;
};

TEST(CpuAttention, MatchesRefAttend) {
  const Case cases[] = {{64, 64, 0, 0, 0, false},  {64, 64, 0, 99, 0, false},  {16, 12, 3, 40, 0, false},
                        {24, 72, 10, 10, 0, false}, {64, 64, 0, 57, 30.0f, false}, {32, 40, 5, 77, 0, true}};
  std::mt19937 rng(11);
  for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (const Case& c : cases) {
      const int64_t positions = c.last + 1;
      const std::vector<float> q = random_values(c.key_dim, rng);
      const std::vector<float> keys = random_values(positions * c.key_dim, rng);
      const std::vector<float> values = random_values(positions * c.value_dim, rng);
      std::vector<std::byte> stored_keys(keys.size() * dtype_size(dtype)), stored_values(values.size() * dtype_size(dtype));
      narrow_from_f32(dtype, keys.data(), keys.size(), stored_keys.data());
      narrow_from_f32(dtype, values.data(), values.size(), stored_values.data());
      const CachedRows key_rows{stored_keys.data(), dtype, c.key_dim}, value_rows{stored_values.data(), dtype, c.value_dim};
      const float sink = 0.7f;
      const float scale = 0.125f;
      std::vector<float> scratch(static_cast<size_t>(positions)), expected(c.value_dim), actual(c.value_dim);
      ScoreTerms terms;
      terms.scale = scale;
      terms.softcap = c.softcap;
      terms.sinks = c.sink ? &sink : nullptr;
      ref::attend(q.data(), 1, key_rows, value_rows, c.first, c.last, terms, scratch.data(), expected.data());
      cpu::attend(q.data(), 1, key_rows, value_rows, c.first, c.last, terms, scratch.data(), actual.data());
      for (int64_t d = 0; d < c.value_dim; ++d)
        EXPECT_NEAR(actual[d], expected[d], 1e-5f) << dtype_name(dtype) << " key_dim " << c.key_dim << " value_dim "
                                                   << c.value_dim << " positions " << c.first << ".." << c.last
                                                   << " dim " << d;
    }
}

// A sparse attention's unselected keys (keep[p] == 0) weigh nothing: the result is attention
// over the kept rows alone, on both backends.
TEST(CpuAttention, KeepAttendsToTheKeptPositionsOnly) {
  const int64_t key_dim = 24, value_dim = 16, first = 2, last = 20;
  std::mt19937 rng(12);
  const std::vector<float> q = random_values(key_dim, rng);
  const std::vector<float> keys = random_values((last + 1) * key_dim, rng);
  const std::vector<float> values = random_values((last + 1) * value_dim, rng);
  std::vector<uint8_t> keep(static_cast<size_t>(last + 1 - first));
  std::vector<float> kept_keys, kept_values;
  for (int64_t p = first; p <= last; ++p) {
    keep[p - first] = p % 3 != 1;
    if (!keep[p - first]) continue;
    kept_keys.insert(kept_keys.end(), keys.begin() + p * key_dim, keys.begin() + (p + 1) * key_dim);
    kept_values.insert(kept_values.end(), values.begin() + p * value_dim, values.begin() + (p + 1) * value_dim);
  }
  const CachedRows all_keys{keys.data(), DType::kF32, key_dim}, all_values{values.data(), DType::kF32, value_dim};
  const CachedRows some_keys{kept_keys.data(), DType::kF32, key_dim};
  const CachedRows some_values{kept_values.data(), DType::kF32, value_dim};
  const int64_t kept = static_cast<int64_t>(kept_keys.size()) / key_dim;
  std::vector<float> scratch(static_cast<size_t>(last + 1)), expected(value_dim), ref_out(value_dim), cpu_out(value_dim);
  ScoreTerms terms;
  terms.scale = 0.2f;
  ref::attend(q.data(), 1, some_keys, some_values, 0, kept - 1, terms, scratch.data(), expected.data());
  terms.keep = keep.data();
  ref::attend(q.data(), 1, all_keys, all_values, first, last, terms, scratch.data(), ref_out.data());
  cpu::attend(q.data(), 1, all_keys, all_values, first, last, terms, scratch.data(), cpu_out.data());
  for (int64_t d = 0; d < value_dim; ++d) {
    EXPECT_NEAR(ref_out[d], expected[d], 1e-6f) << d;
    EXPECT_NEAR(cpu_out[d], expected[d], 1e-5f) << d;
  }
}

// A kv head's query heads in one call: each head's outputs are the bits of its own call on
// cpu, and within the tolerance above of ref's, each with its own sink and position bias.
TEST(CpuAttention, QueryHeadsOfAKvHeadInOneCall) {
  const int64_t heads = 3, key_dim = 40, value_dim = 72, first = 3, last = 30, count = last - first + 1;
  std::mt19937 rng(13);
  const std::vector<float> q = random_values(heads * key_dim, rng), sinks = random_values(heads, rng);
  const std::vector<float> keys = random_values((last + 1) * key_dim, rng);
  const std::vector<float> values = random_values((last + 1) * value_dim, rng);
  const CachedRows key_rows{keys.data(), DType::kF32, key_dim}, value_rows{values.data(), DType::kF32, value_dim};
  std::vector<float> scratch(static_cast<size_t>(heads * count)), expected(heads * value_dim),
      actual(heads * value_dim), one(value_dim);
  // Each head with its own sink and its own row of a position bias.
  const std::vector<float> bias = random_values(heads * count, rng);
  ScoreTerms terms;
  terms.scale = 0.2f;
  terms.sinks = sinks.data();
  terms.bias = bias.data();
  terms.bias_stride = count;
  ref::attend(q.data(), heads, key_rows, value_rows, first, last, terms, scratch.data(), expected.data());
  cpu::attend(q.data(), heads, key_rows, value_rows, first, last, terms, scratch.data(), actual.data());
  for (int64_t h = 0; h < heads; ++h) {
    ScoreTerms alone = terms;
    alone.sinks = sinks.data() + h;
    alone.bias = bias.data() + h * count;
    cpu::attend(q.data() + h * key_dim, 1, key_rows, value_rows, first, last, alone, scratch.data(), one.data());
    EXPECT_EQ(std::vector<float>(actual.begin() + h * value_dim, actual.begin() + (h + 1) * value_dim), one) << h;
    for (int64_t d = 0; d < value_dim; ++d)
      EXPECT_NEAR(actual[h * value_dim + d], expected[h * value_dim + d], 1e-5f) << h << " " << d;
  }
}

// A position bias moves the scores before the softmax: a bias that leaves one position the
// only likely one gives that position's value row, on both backends.
TEST(CpuAttention, PositionBiasShiftsTheScoresBeforeTheSoftmax) {
  const int64_t key_dim = 16, value_dim = 8, last = 9, chosen = 4;
  std::mt19937 rng(21);
  const std::vector<float> q = random_values(key_dim, rng);
  const std::vector<float> keys = random_values((last + 1) * key_dim, rng);
  const std::vector<float> values = random_values((last + 1) * value_dim, rng);
  const CachedRows key_rows{keys.data(), DType::kF32, key_dim}, value_rows{values.data(), DType::kF32, value_dim};
  std::vector<float> bias(static_cast<size_t>(last + 1), -1e4f);
  bias[chosen] = 0;
  ScoreTerms terms;
  terms.scale = 0.25f;
  terms.bias = bias.data();
  std::vector<float> scratch(static_cast<size_t>(last + 1)), ref_out(value_dim), cpu_out(value_dim);
  ref::attend(q.data(), 1, key_rows, value_rows, 0, last, terms, scratch.data(), ref_out.data());
  cpu::attend(q.data(), 1, key_rows, value_rows, 0, last, terms, scratch.data(), cpu_out.data());
  for (int64_t d = 0; d < value_dim; ++d) {
    EXPECT_NEAR(ref_out[d], values[chosen * value_dim + d], 1e-6f) << d;
    EXPECT_NEAR(cpu_out[d], values[chosen * value_dim + d], 1e-6f) << d;
  }
}

struct TileCase {
  int64_t tokens, start, heads, kv_heads, key_dim, value_dim, window;
  bool bias;
  float softcap;
};

// attention_in_tiles against ref::attention: a tile's last queries short of kTileQueries, key
// and value widths off the 16-wide panels, grouped query heads, windows both ways, a position
// bias, a soft cap, and queries that start past the first position.
TEST(CpuAttention, InTilesMatchesRefAttention) {
  const TileCase cases[] = {{1, 0, 2, 2, 16, 16, 0, false, 0},   {37, 0, 4, 2, 20, 24, 0, false, 0},
                            {70, 5, 3, 1, 64, 40, 0, true, 0},   {45, 0, 2, 2, 32, 32, 9, false, 0},
                            {33, 0, 2, 1, 24, 16, 40, true, 20.0f}, {100, 0, 1, 1, 8, 72, 3, false, 0}};
  std::mt19937 rng(31);
  for (const TileCase& c : cases) {
    const int64_t count = c.start + c.tokens, span = count;
    const std::vector<float> q = random_values(c.tokens * c.heads * c.key_dim, rng);
    const std::vector<float> keys = random_values(c.kv_heads * count * c.key_dim, rng);
    const std::vector<float> values = random_values(c.kv_heads * count * c.value_dim, rng);
    const std::vector<float> bias = random_values(c.heads * (2 * span - 1), rng);
    AttentionArgs args;
    args.q = q.data();
    args.tokens = c.tokens;
    args.start = c.start;
    args.heads = c.heads;
    args.kv_heads = c.kv_heads;
    args.keys = {keys.data(), DType::kF32, c.key_dim};
    args.values = {values.data(), DType::kF32, c.value_dim};
    args.key_stride = count * c.key_dim;
    args.value_stride = count * c.value_dim;
    args.causal = false;
    args.window = c.window;
    args.scale = 0.3f;
    args.softcap = c.softcap;
    if (c.bias) {
      args.position_bias = bias.data();
      args.bias_span = span;
    }
    ASSERT_TRUE(cpu::attends_in_tiles(args));
    std::vector<float> expected(c.tokens * c.heads * c.value_dim), actual(expected.size(), -9.0f);
    args.out = expected.data();
    ref::attention(args);
    args.out = actual.data();
    cpu::attention_in_tiles(args);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_NEAR(actual[i], expected[i], 1e-5f) << "tokens " << c.tokens << " window " << c.window << " output " << i;
  }
}

TEST(CpuAttention, InTilesTakesNotCausalF32AttentionWithoutSinksOrKeep) {
  const float value = 0;
  const uint8_t keep = 1;
  AttentionArgs args;
  args.causal = false;
  EXPECT_TRUE(cpu::attends_in_tiles(args));
  AttentionArgs causal = args, bf16 = args, sinks = args, sparse = args, chunked = args;
  causal.causal = true;
  bf16.keys.dtype = DType::kBF16;
  sinks.sinks = &value;
  sparse.keep = &keep;
  chunked.chunk = 8;
  for (const AttentionArgs& other : {causal, bf16, sinks, sparse, chunked}) EXPECT_FALSE(cpu::attends_in_tiles(other));
}

}  // namespace
}  // namespace canrun
