// cpu::attend against ref::attend (double sums) on random queries, keys and values: windows
// that start past 0, a value width that is not a multiple of the vector width, soft-capping and
// a sink, over f32, bf16 and f16 caches (both read the same stored values). Scores and
// probabilities are f32 in both; the cpu sums in f32, so the outputs (each a convex mix of
// values in [-1, 1]) agree to about 1e-6; the test allows 1e-5.
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

}  // namespace
}  // namespace canrun
