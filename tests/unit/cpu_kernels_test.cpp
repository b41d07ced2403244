// The cpu backend's matrix products against ref::linear (double accumulation) on random data
// of sizes that are not multiples of the vector width or the blocking. Tolerance: f32 sums
// run in lanes, so each output's rounding error is at most about (depth) * 2^-24 * sum|x*w|
// with depth = in/8 + 16 (the longest chain of adds: one lane, then the lane reduction and
// the scalar tail); the tests allow exactly that, plus the bias.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/kernel_table.h"
#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"
#include "util/aligned_buffer.h"
#include "instruction_sets.h"
#include "random_values.h"

namespace canrun {
namespace {

struct Problem {
  int64_t rows, out, in;
};
const Problem kProblems[] = {{1, 1, 1}, {1, 7, 13}, {3, 33, 67}, {17, 40, 257}, {1, 129, 1000}, {17, 19, 8}};

// Rounds to bf16 by truncation: any bf16 values will do, and these are exact in both forms.
std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(v[i]) >> 16);
  return bits;
}
std::vector<float> from_bf16(const std::vector<uint16_t>& bits) {
  std::vector<float> v(bits.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = bf16_to_f32(bits[i]);
  return v;
}

// The allowed error of output (r, o) of x @ w^T, as the header explains.
float tolerance(const float* x, const float* w, int64_t in, float bias) {
  double magnitude = std::abs(bias);
  for (int64_t i = 0; i < in; ++i) magnitude += std::abs(static_cast<double>(x[i]) * w[i]);
  return static_cast<float>((static_cast<double>(in) / 8 + 16) * 0x1p-24 * magnitude) + 1e-30f;
}

void expect_close_to_ref(const Problem& p, const std::vector<float>& x, const std::vector<float>& w_f32,
                         const WeightMatrix& w, const std::vector<float>& bias) {
  std::vector<float> expected(p.rows * p.out), actual(p.rows * p.out);
  const float* b = bias.empty() ? nullptr : bias.data();
  ref::linear(x.data(), p.rows, p.in, w_f32.data(), b, p.out, expected.data());
  cpu::linear(x.data(), p.rows, w, b, {}, actual.data());
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t o = 0; o < p.out; ++o) {
      const float tol = tolerance(x.data() + r * p.in, w_f32.data() + o * p.in, p.in, b ? b[o] : 0.0f);
      ASSERT_NEAR(actual[r * p.out + o], expected[r * p.out + o], tol)
          << "rows " << p.rows << " out " << p.out << " in " << p.in << " at (" << r << ", " << o << ")";
    }
}

TEST(CpuLinear, Bf16WeightsMatchRef) {
  std::mt19937 rng(1);
  for (const Problem& p : kProblems) {
    const std::vector<float> x = random_values(p.rows * p.in, rng);
    const std::vector<uint16_t> bits = to_bf16(random_values(p.out * p.in, rng));
    const std::vector<float> bias = random_values(p.out, rng);
    const WeightMatrix w = WeightMatrix::bf16_owning(bits, p.out, p.in);
    expect_close_to_ref(p, x, from_bf16(bits), w, bias);
    expect_close_to_ref(p, x, from_bf16(bits), w, {});
  }
}

TEST(CpuLinear, F32WeightsMatchRef) {
  std::mt19937 rng(2);
  for (const Problem& p : kProblems) {
    const std::vector<float> x = random_values(p.rows * p.in, rng);
    const std::vector<float> values = random_values(p.out * p.in, rng);
    const WeightMatrix w = WeightMatrix::f32(FloatBuffer::borrowing(values.data(), values.size()), p.out, p.in);
    expect_close_to_ref(p, x, values, w, random_values(p.out, rng));
  }
}

// Every instruction set the processor has against a double sum, and a tile's outputs the
// same bits whatever the block shape that computes them.
std::vector<const cpu::Primitives*> primitive_sets() {
  std::vector<const cpu::Primitives*> sets;
  for (cpu::InstructionSet set : tested_instruction_sets()) sets.push_back(&cpu::primitives_for(set));
  return sets;
}

TEST(CpuPrimitives, DotsWidenAndTilesMatchDoubleSums) {
  std::mt19937 rng(3);
  for (const cpu::Primitives* p : primitive_sets()) {
    for (const int64_t n : {1, 7, 8, 31, 33, 100, 515}) {
      const std::vector<float> x = random_values(n, rng);
      const std::vector<uint16_t> bits = to_bf16(random_values(n, rng));
      const std::vector<float> w = from_bf16(bits);
      std::vector<float> widened(static_cast<size_t>(n));
      p->widen_bf16(bits.data(), n, widened.data());
      EXPECT_EQ(widened, w);
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(x[i]) * w[i];
      const float tol = tolerance(x.data(), w.data(), n, 0);
      EXPECT_NEAR(p->dot_f32(x.data(), w.data(), n), exact, tol) << n;
      EXPECT_NEAR(p->dot_bf16(x.data(), bits.data(), n), exact, tol) << n;
      float tiled = 0;
      p->tile(x.data(), 1, w.data(), 1, n, &tiled, 1);
      EXPECT_NEAR(tiled, exact, tol) << n;
    }
  }
}

// Cached rows as attention stores them: f32, or rounded to bf16 / f16; `widened` gets the
// values the kernels must read.
std::vector<std::byte> stored_rows(DType dtype, const std::vector<float>& rows, std::vector<float>& widened) {
  std::vector<std::byte> stored(rows.size() * dtype_size(dtype));
  narrow_from_f32(dtype, rows.data(), rows.size(), stored.data());
  widened.resize(rows.size());
  widen_to_f32(dtype, stored.data(), rows.size(), widened.data());
  return stored;
}

TEST(CpuPrimitives, DotsOverRowsMatchDoubleSums) {
  std::mt19937 rng(8);
  for (const cpu::Primitives* p : primitive_sets())
    for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
      for (const int64_t n : {1, 7, 8, 64, 67})
        for (const int64_t count : {1, 7, 8, 9, 17}) {
          const std::vector<float> x = random_values(n, rng);
          std::vector<float> rows;
          const std::vector<std::byte> stored = stored_rows(dtype, random_values(count * n, rng), rows);
          std::vector<float> out(static_cast<size_t>(count) + 1, 99.0f);
          p->dot_rows(x.data(), 1, stored.data(), dtype, count, n, out.data());
          for (int64_t i = 0; i < count; ++i) {
            double exact = 0;
            for (int64_t k = 0; k < n; ++k) exact += static_cast<double>(x[k]) * rows[i * n + k];
            EXPECT_NEAR(out[i], exact, tolerance(x.data(), rows.data() + i * n, n, 0))
                << dtype_name(dtype) << " " << n << " " << count << " " << i;
          }
          EXPECT_EQ(out.back(), 99.0f) << "wrote past the rows";
        }
}

TEST(CpuPrimitives, ShiftedExponentialsAndTheirSumMatchStdExp) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> scores(-30.0f, 5.0f);
  for (const cpu::Primitives* p : primitive_sets())
    for (const int64_t n : {1, 7, 8, 9, 100}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = scores(rng);
      const std::vector<float> original = x;
      const double sum = p->softmax_loops.exp_shifted(x.data(), n, 5.0f, 0.25);
      double exact_sum = 0.25;
      for (int64_t i = 0; i < n; ++i) {
        const double exact = std::exp(static_cast<double>(original[i] - 5.0f));  // the shift is in f32
        EXPECT_NEAR(x[i], exact, 4 * 0x1p-23 * exact + 1e-30) << n << " " << i;  // glibc's 4 ulp
        exact_sum += exact;
      }
      EXPECT_NEAR(sum, exact_sum, 4 * 0x1p-23 * exact_sum) << n;
    }
}

TEST(CpuPrimitives, SoftmaxScaleAndMaximumAreRefs) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> scores(-30.0f, 5.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const cpu::Primitives* p : primitive_sets())
    for (const int64_t n : {1, 7, 8, 9, 100}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = scores(rng);
      std::vector<float> scaled = x, expected = x;
      p->softmax_loops.scale(scaled.data(), n, 0.125f * 1.1f);
      ref::scale(expected.data(), n, 0.125f * 1.1f);
      EXPECT_EQ(scaled, expected) << n;
      EXPECT_EQ(p->softmax_loops.max_of(x.data(), n, -100.0f), ref::max_of(x.data(), n, -100.0f)) << n;
      EXPECT_EQ(p->softmax_loops.max_of(x.data(), n, 50.0f), 50.0f) << n;
      x[static_cast<size_t>(n / 2)] = nan;  // passed over, wherever it falls among the lanes
      EXPECT_EQ(p->softmax_loops.max_of(x.data(), n, -100.0f), ref::max_of(x.data(), n, -100.0f)) << n;
      EXPECT_TRUE(std::isnan(p->softmax_loops.max_of(x.data(), n, nan))) << n;  // a NaN start stays
    }
}

// silu(g) * u in double; the f32 version's exp is within 4 ulp and three more roundings follow.
double exact_gated_silu(float g, float u) { return g / (1.0 + std::exp(-static_cast<double>(g))) * u; }

TEST(CpuPrimitives, GatedSiluMatchesDoubleExp) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> values(-20.0f, 20.0f);
  for (const cpu::Primitives* p : primitive_sets())
    for (const int64_t n : {1, 7, 8, 9, 100}) {
      std::vector<float> gate(static_cast<size_t>(n)), up(gate.size()), y(gate.size() + 1, 99.0f);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = values(rng), up[i] = values(rng);
      p->gated_silu(gate.data(), up.data(), n, y.data());
      for (int64_t i = 0; i < n; ++i) {
        const double exact = exact_gated_silu(gate[i], up[i]);
        EXPECT_NEAR(y[i], exact, 8 * 0x1p-23 * std::abs(exact) + 1e-30) << n << " " << i;
      }
      EXPECT_EQ(y.back(), 99.0f) << "wrote past the values";
    }
}

TEST(CpuKernels, GatedActivationOverThreadsMatchesRef) {
  // Long enough for several threads' chunks; the other activations are ref's own.
  std::mt19937 rng(6);
  const int64_t n = 100003;
  const std::vector<float> gate = random_values(n, rng), up = random_values(n, rng);
  for (Activation act : {Activation::kSilu, Activation::kGeluTanh}) {
    std::vector<float> expected(static_cast<size_t>(n)), actual(static_cast<size_t>(n));
    ref::gated_activation(act, gate.data(), up.data(), n, expected.data());
    cpu_kernels().gated_activation(act, gate.data(), up.data(), n, actual.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(actual[i], expected[i], 8 * 0x1p-23 * std::abs(expected[i]) + 1e-30) << i;
  }
}

TEST(CpuKernels, NormsOverThreadsGiveRefBits) {
  // Enough rows for every thread (and an uneven split); in place as the programs run them too.
  std::mt19937 rng(8);
  const int64_t rows = 301, dim = 257;
  const std::vector<float> x = random_values(rows * dim, rng), weight = random_values(dim, rng),
                           bias = random_values(dim, rng);
  std::vector<float> expected(x.size()), actual(x.size());
  ref::rms_norm(x.data(), weight.data(), rows, dim, 1e-6f, expected.data());
  cpu_kernels().rms_norm(x.data(), weight.data(), rows, dim, 1e-6f, actual.data());
  EXPECT_EQ(actual, expected) << "rms_norm";
  actual = x;
  cpu_kernels().rms_norm(actual.data(), weight.data(), rows, dim, 1e-6f, actual.data());
  EXPECT_EQ(actual, expected) << "rms_norm in place";
  for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
    ref::layer_norm(x.data(), weight.data(), b, rows, dim, 1e-5f, expected.data());
    cpu_kernels().layer_norm(x.data(), weight.data(), b, rows, dim, 1e-5f, actual.data());
    EXPECT_EQ(actual, expected) << "layer_norm, bias " << (b != nullptr);
  }
}

TEST(CpuPrimitives, WeightedSumsMatchDoubleSums) {
  std::mt19937 rng(5);
  for (const cpu::Primitives* p : primitive_sets())
    for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
      for (const int64_t n : {1, 7, 8, 12, 64, 72, 130})
        for (const int64_t count : {1, 5, 40}) {
          const std::vector<float> weights = random_values(count, rng);
          std::vector<float> rows;
          const std::vector<std::byte> stored = stored_rows(dtype, random_values(count * n, rng), rows);
          std::vector<float> out(static_cast<size_t>(n), 99.0f);  // overwritten, not added to
          p->weighted_sum(weights.data(), 1, stored.data(), dtype, count, n, out.data());
          for (int64_t j = 0; j < n; ++j) {
            double exact = 0, magnitude = 0;
            for (int64_t q = 0; q < count; ++q) {
              exact += static_cast<double>(weights[q]) * rows[q * n + j];
              magnitude += std::abs(static_cast<double>(weights[q]) * rows[q * n + j]);
            }
            // One chain of `count` adds per output.
            EXPECT_NEAR(out[j], exact, (count + 1) * 0x1p-24 * magnitude + 1e-30)
                << dtype_name(dtype) << " " << n << " " << count << " " << j;
          }
        }
}

TEST(CpuPrimitives, QueryHeadsTogetherGiveTheBitsOfOneHeadAtATime) {
  // A kv head's query heads share the loads of its keys and values, never a score's or an
  // output's order of sums: odd head counts, key counts around the blocks of eight, widths
  // around the vectors.
  std::mt19937 rng(9);
  for (const cpu::Primitives* p : primitive_sets())
    for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
      for (const int64_t heads : {2, 3, 7})
        for (const int64_t n : {7, 40, 64, 67, 128})
          for (const int64_t count : {5, 16, 21}) {
            const std::vector<float> x = random_values(heads * n, rng), weights = random_values(heads * count, rng);
            std::vector<float> rows;
            const std::vector<std::byte> stored = stored_rows(dtype, random_values(count * n, rng), rows);
            std::vector<float> scores(static_cast<size_t>(heads * count)), sums(static_cast<size_t>(heads * n));
            p->dot_rows(x.data(), heads, stored.data(), dtype, count, n, scores.data());
            p->weighted_sum(weights.data(), heads, stored.data(), dtype, count, n, sums.data());
            for (int64_t h = 0; h < heads; ++h) {
              std::vector<float> score(static_cast<size_t>(count)), sum(static_cast<size_t>(n));
              p->dot_rows(x.data() + h * n, 1, stored.data(), dtype, count, n, score.data());
              p->weighted_sum(weights.data() + h * count, 1, stored.data(), dtype, count, n, sum.data());
              EXPECT_EQ(std::vector<float>(scores.begin() + h * count, scores.begin() + (h + 1) * count), score)
                  << dtype_name(dtype) << " heads " << heads << " n " << n << " count " << count << " head " << h;
              EXPECT_EQ(std::vector<float>(sums.begin() + h * n, sums.begin() + (h + 1) * n), sum)
                  << dtype_name(dtype) << " heads " << heads << " n " << n << " count " << count << " head " << h;
            }
          }
}

TEST(CpuPrimitives, TileOutputsDoNotDependOnBlockShape) {
  std::mt19937 rng(4);
  const int64_t rows = 17, out = 5, in = 67;
  const std::vector<float> x = random_values(rows * in, rng), w = random_values(out * in, rng);
  for (const cpu::Primitives* p : primitive_sets()) {
    std::vector<float> whole(rows * out), one_by_one(rows * out);
    p->tile(x.data(), rows, w.data(), out, in, whole.data(), out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o)
        p->tile(x.data() + r * in, 1, w.data() + o * in, 1, in, &one_by_one[r * out + o], 1);
    EXPECT_EQ(whole, one_by_one);
  }
}

TEST(CpuPrimitives, PanelRowsGiveTheBitsOfOnePanelAtATime) {
  // Decode runs several panels side by side; each output must stay the chain a prefill row
  // computes, or the KV cache written in prefill would differ from what decode writes.
  std::mt19937 rng(6);
  const int64_t in = 37;
  for (const cpu::Primitives* p : primitive_sets())
    for (const int64_t count : {1, 2, 3, 4, 5, 6, 7, 9}) {
      const std::vector<float> x = random_values(in, rng), values = random_values(count * 16 * in, rng);
      // Panels aligned as a plan file aligns them: the vector sets load them with aligned loads.
      AlignedBuffer f32_storage, bf16_storage;
      auto* w = reinterpret_cast<float*>(f32_storage.reserve(count * 16 * in * 4, "panels"));
      auto* bits = reinterpret_cast<uint16_t*>(bf16_storage.reserve(count * 16 * in * 2, "panels"));
      std::copy(values.begin(), values.end(), w);
      const std::vector<uint16_t> rounded = to_bf16(values);
      std::copy(rounded.begin(), rounded.end(), bits);
      for (const int64_t outputs : {count * 16, count * 16 - 15}) {
        std::vector<float> f32_rows(outputs + 1, 99.0f), bf16_rows(outputs + 1, 99.0f);
        p->panels_row_f32(x.data(), in, w, count, outputs, f32_rows.data());
        p->panels_row_bf16(x.data(), in, bits, count, outputs, bf16_rows.data());
        std::vector<float> f32_panels(outputs + 1, 99.0f), bf16_panels(outputs + 1, 99.0f);
        for (int64_t q = 0; q < count; ++q) {
          const int64_t width = std::min<int64_t>(16, outputs - q * 16);
          p->panel_f32(x.data(), 1, in, w + q * 16 * in, width, f32_panels.data() + q * 16, 0, 1);
          p->panel_bf16(x.data(), 1, in, bits + q * 16 * in, width, bf16_panels.data() + q * 16, 0, 1);
        }
        EXPECT_EQ(f32_rows, f32_panels) << count << " panels, " << outputs << " outputs";
        EXPECT_EQ(bf16_rows, bf16_panels) << count << " panels, " << outputs << " outputs";
        EXPECT_EQ(f32_rows.back(), 99.0f) << "wrote past the outputs";
      }
    }
}

TEST(WeightMatrix, SlicesTransposesAndStacksBf16) {
  const std::vector<uint16_t> bits = {1, 2, 3, 4, 5, 6};  // [[1 2 3] [4 5 6]]
  const WeightMatrix m = WeightMatrix::bf16_borrowing(bits.data(), 2, 3);
  const WeightMatrix t = m.transposed();
  ASSERT_EQ(t.rows(), 3);
  EXPECT_EQ(std::vector<uint16_t>(t.bf16_data(), t.bf16_data() + 6), (std::vector<uint16_t>{1, 4, 2, 5, 3, 6}));
  std::vector<WeightMatrix> parts;
  parts.push_back(m.slice_rows(1, 1));
  parts.push_back(m.slice_rows(0, 1));
  const WeightMatrix swapped = WeightMatrix::stack(parts);
  EXPECT_EQ(swapped.dtype(), DType::kBF16);
  EXPECT_EQ(std::vector<uint16_t>(swapped.bf16_data(), swapped.bf16_data() + 6),
            (std::vector<uint16_t>{4, 5, 6, 1, 2, 3}));
}

// A slice of a mapped matrix reads the mapping in place (a fused projection split at load costs
// no copy); a slice of an owned one is a copy that outlives it.
TEST(WeightMatrix, SlicesBorrowWhatTheMatrixBorrowsAndCopyWhatItOwns) {
  const std::vector<uint16_t> bits = {1, 2, 3, 4, 5, 6};
  const WeightMatrix mapped = WeightMatrix::bf16_borrowing(bits.data(), 2, 3);
  EXPECT_EQ(mapped.slice_rows(1, 1).bf16_data(), bits.data() + 3);
  const std::vector<float> floats = {1, 2, 3, 4, 5, 6};
  const WeightMatrix mapped_f32 = WeightMatrix::f32(FloatBuffer::borrowing(floats.data(), 6), 3, 2);
  EXPECT_EQ(mapped_f32.slice_rows(2, 1).f32_data(), floats.data() + 4);
  const std::vector<uint8_t> fp8 = {10, 11, 12, 13, 14, 15};
  const WeightMatrix mapped_fp8 =
      WeightMatrix::scaled_bytes_borrowing(DType::kF8E4M3, fp8.data(), FloatBuffer::owning({0.5f, 0.25f, 0.125f}),
                                           2, 3, 2);
  const WeightMatrix fp8_row = mapped_fp8.slice_rows(1, 2);
  EXPECT_EQ(fp8_row.byte_data(), fp8.data() + 2);
  EXPECT_EQ(std::vector<float>(fp8_row.byte_scales(), fp8_row.byte_scales() + 2), (std::vector<float>{0.25f, 0.125f}));

  WeightMatrix slice;
  {
    const WeightMatrix owned = WeightMatrix::bf16_owning({1, 2, 3, 4, 5, 6}, 2, 3);
    slice = owned.slice_rows(1, 1);
    EXPECT_NE(slice.bf16_data(), owned.bf16_data() + 3);
  }
  EXPECT_EQ(std::vector<uint16_t>(slice.bf16_data(), slice.bf16_data() + 3), (std::vector<uint16_t>{4, 5, 6}));
  WeightMatrix fp8_slice;
  {
    const WeightMatrix owned = WeightMatrix::scaled_bytes_owning(DType::kF8E4M3, {10, 11, 12, 13},
                                                                 FloatBuffer::owning({0.5f, 0.25f}), 2, 2, 2);
    fp8_slice = owned.slice_rows(1, 1);
  }
  EXPECT_EQ(std::vector<uint8_t>(fp8_slice.byte_data(), fp8_slice.byte_data() + 2), (std::vector<uint8_t>{12, 13}));
  EXPECT_EQ(fp8_slice.byte_scales()[0], 0.25f);
}

}  // namespace
}  // namespace canrun
