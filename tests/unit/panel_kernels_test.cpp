// Packed panels (compile/weight_packing.h) and the cpu backend's products with them, against
// ref::linear (double accumulation) on sizes that are not multiples of the panel width. Each
// panel output is one f32 chain over k, so its rounding error is at most about
// (in + 16) * 2^-24 * sum|x*w|; the tests allow exactly that. Every tuning choice must give
// the same bits, since tuning may only change speed.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "compile/weight_packing.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/panel_choices.h"
#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"
#include "util/error.h"
#include "random_values.h"

namespace canrun {
namespace {

struct Problem {
  int64_t rows, out, in;
};
const Problem kProblems[] = {{1, 1, 1}, {1, 7, 13}, {3, 33, 67}, {17, 40, 257}, {1, 129, 1000}, {13, 16, 8}};

// A row-major matrix and its packed copy; bf16 values are truncated f32s, exact in both forms.
struct Packed {
  std::vector<float> reference;  // the weights as f32, row-major
  WeightMatrix rows;
  std::vector<std::byte> storage;
  WeightMatrix panels;
};

Packed make_packed(const Problem& p, DType dtype, std::mt19937& rng) {
  Packed m;
  m.reference = random_values(p.out * p.in, rng);
  if (dtype == DType::kBF16) {
    std::vector<uint16_t> bits(m.reference.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(m.reference[i]) >> 16);
      m.reference[i] = bf16_to_f32(bits[i]);
    }
    m.rows = WeightMatrix::bf16_owning(std::move(bits), p.out, p.in);
  } else {
    m.rows = WeightMatrix::f32(FloatBuffer::owning(m.reference), p.out, p.in);
  }
  // 32 extra bytes to align the start by hand, as a plan file's offsets are.
  m.storage.resize(static_cast<size_t>(WeightMatrix::panel_bytes(dtype, p.out, p.in)) + 32);
  std::byte* aligned = m.storage.data() + (32 - reinterpret_cast<uintptr_t>(m.storage.data()) % 32) % 32;
  pack_panels(m.rows, aligned);
  m.panels = WeightMatrix::panels_borrowing(dtype, aligned, p.out, p.in);
  return m;
}

void expect_panels_match_ref(DType dtype) {
  std::mt19937 rng(7);
  for (const Problem& p : kProblems) {
    const Packed m = make_packed(p, dtype, rng);
    const std::vector<float> x = random_values(p.rows * p.in, rng), bias = random_values(p.out, rng);
    std::vector<float> expected(p.rows * p.out), actual(p.rows * p.out);
    ref::linear(x.data(), p.rows, p.in, m.reference.data(), bias.data(), p.out, expected.data());
    cpu::linear(x.data(), p.rows, m.panels, bias.data(), {}, actual.data());
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t o = 0; o < p.out; ++o) {
        double magnitude = std::abs(bias[o]);
        for (int64_t i = 0; i < p.in; ++i) magnitude += std::abs(double{x[r * p.in + i]} * m.reference[o * p.in + i]);
        const double tol = (static_cast<double>(p.in) + 16) * 0x1p-24 * magnitude + 1e-30;
        ASSERT_NEAR(actual[r * p.out + o], expected[r * p.out + o], tol)
            << "rows " << p.rows << " out " << p.out << " in " << p.in << " at (" << r << ", " << o << ")";
      }
  }
}

TEST(PanelProducts, F32PanelsMatchRef) { expect_panels_match_ref(DType::kF32); }
TEST(PanelProducts, Bf16PanelsMatchRef) { expect_panels_match_ref(DType::kBF16); }

TEST(PanelProducts, EveryTuningChoiceGivesTheSameBits) {
  std::mt19937 rng(11);
  const Problem p{23, 50, 77};
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const Packed m = make_packed(p, dtype, rng);
    const std::vector<float> x = random_values(p.rows * p.in, rng);
    std::vector<float> baseline(p.rows * p.out);
    cpu::linear(x.data(), p.rows, m.panels, nullptr, {}, baseline.data());
    for (int rows_per_block : cpu::kPanelRowBlocks)
      for (int64_t chunk : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{64}}) {
        KernelChoices choices;
        choices.panels.set({p.rows, p.out, p.in, dtype}, {rows_per_block, chunk});
        std::vector<float> y(p.rows * p.out);
        cpu::linear(x.data(), p.rows, m.panels, nullptr, choices, y.data());
        EXPECT_EQ(y, baseline) << "rows_per_block " << rows_per_block << " row_chunk " << chunk;
      }
  }
}

TEST(PanelProducts, SameBitsAsPrefillRowForOneRow) {
  // Decode (one row) and a prefill over many rows must agree on a row they share: the KV
  // cache written during prefill is read during decode.
  std::mt19937 rng(3);
  for (const Problem& p : {Problem{9, 40, 100}, Problem{9, 100, 40}, Problem{5, 2000, 600}})
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const Packed m = make_packed(p, dtype, rng);
      const std::vector<float> x = random_values(p.rows * p.in, rng);
      std::vector<float> all(p.rows * p.out), last(p.out);
      cpu::linear(x.data(), p.rows, m.panels, nullptr, {}, all.data());
      cpu::linear(x.data() + (p.rows - 1) * p.in, 1, m.panels, nullptr, {}, last.data());
      EXPECT_EQ(std::vector<float>(all.end() - p.out, all.end()), last) << p.out << " x " << p.in;
    }
}

TEST(PanelChoices, SmallestRecordedBucketHoldingTheRowsWins) {
  cpu::PanelChoices choices;
  EXPECT_TRUE(choices.empty());
  choices.set({128, 10, 20, DType::kF32}, {6, 64});
  choices.set({32, 10, 20, DType::kF32}, {2, 0});
  EXPECT_EQ(choices.find(20, 10, 20, DType::kF32), (cpu::PanelChoice{2, 0}));
  EXPECT_EQ(choices.find(33, 10, 20, DType::kF32), (cpu::PanelChoice{6, 64}));
  EXPECT_EQ(choices.find(500, 10, 20, DType::kF32), cpu::PanelChoice{});  // past every bucket
  EXPECT_EQ(choices.find(20, 10, 20, DType::kBF16), cpu::PanelChoice{});  // another dtype
}

TEST(WeightMatrix, PanelsRefuseRowMajorOperations) {
  alignas(32) static float data[16 * 4] = {};
  const WeightMatrix m = WeightMatrix::panels_borrowing(DType::kF32, data, 3, 4);
  EXPECT_EQ(m.layout(), MatrixLayout::kPanels);
  EXPECT_EQ(m.panel_count(), 1);
  EXPECT_EQ(WeightMatrix::panel_bytes(DType::kBF16, 17, 3), 32 * 3 * 2);
  EXPECT_THROW(m.slice_rows(0, 1), Error);
  EXPECT_THROW(m.transposed(), Error);
}

}  // namespace
}  // namespace canrun
