// Packed panels (compile/weight_packing.h) and the cpu backend's products with them, with
// every instruction set the processor has, against ref::linear (double accumulation) on sizes
// that are not multiples of the panel width. Tolerances, per weight dtype and set:
// - f32 weights, and bf16 weights widened to f32: each output is one f32 chain over k, so its
//   rounding error is at most about (in + 16) * 2^-24 * sum|x*w|.
// - bf16 weights on x86_64-avx512-bf16 (vdpbf16ps): x is rounded to bf16 first, which adds at
//   most 2^-8 * sum|x*w|; against ref with x rounded the same way, the f32 bound again.
// oneDNN's matmul (onednn_product.h), where it runs, sums in its own order; the f32 bound holds
// for any order, so it is held to the same tolerances. Every panel choice must give the same
// bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

#include "compile/weight_packing.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/onednn_product.h"
#include "kernels/cpu/panel_choices.h"
#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"
#include "tensor/fp8.h"
#include "tensor/packed_int.h"
#include "util/error.h"
#include "instruction_sets.h"
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

bool rounds_x_to_bf16(cpu::InstructionSet set, DType dtype) {
  return set == cpu::InstructionSet::kAvx512Bf16 && dtype == DType::kBF16;
}

// x rounded to bf16 to nearest even, as vcvtneps2bf16 does for normal numbers.
std::vector<float> rounded_to_bf16(const std::vector<float>& x) {
  std::vector<float> rounded(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(x[i]);
    const uint32_t even = bits + 0x7fffu + ((bits >> 16) & 1u);
    rounded[i] = std::bit_cast<float>(even & 0xffff0000u);
  }
  return rounded;
}

// `x_for_ref`: the x ref multiplies (x itself, or x rounded to bf16); `extra`: the bound's
// term for x's rounding when ref uses x itself.
void expect_products_match_ref(cpu::InstructionSet set, const Problem& p, const Packed& m, const std::vector<float>& x,
                               const std::vector<float>& x_for_ref, double extra, const KernelChoices& choices = {}) {
  const std::vector<float> bias = std::vector<float>(static_cast<size_t>(p.out), 0.25f);
  std::vector<float> expected(p.rows * p.out), actual(p.rows * p.out);
  ref::linear(x_for_ref.data(), p.rows, p.in, m.reference.data(), bias.data(), p.out, expected.data());
  cpu::linear_with(cpu::primitives_for(set), x.data(), p.rows, m.panels, bias.data(), choices, actual.data());
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t o = 0; o < p.out; ++o) {
      double magnitude = std::abs(bias[o]);
      for (int64_t i = 0; i < p.in; ++i) magnitude += std::abs(double{x[r * p.in + i]} * m.reference[o * p.in + i]);
      const double tol = ((static_cast<double>(p.in) + 16) * 0x1p-24 + extra) * magnitude + 1e-30;
      ASSERT_NEAR(actual[r * p.out + o], expected[r * p.out + o], tol)
          << cpu::instruction_set_name(set) << " rows " << p.rows << " out " << p.out << " in " << p.in << " at ("
          << r << ", " << o << ")";
    }
}

void expect_panels_match_ref(DType dtype) {
  std::mt19937 rng(7);
  for (cpu::InstructionSet set : tested_instruction_sets())
    for (const Problem& p : kProblems) {
      const Packed m = make_packed(p, dtype, rng);
      const std::vector<float> x = random_values(p.rows * p.in, rng);
      if (!rounds_x_to_bf16(set, dtype)) {
        expect_products_match_ref(set, p, m, x, x, 0);
        continue;
      }
      expect_products_match_ref(set, p, m, x, x, 0x1p-8);
      expect_products_match_ref(set, p, m, x, rounded_to_bf16(x), 0);
    }
}

TEST(PanelProducts, F32PanelsMatchRef) { expect_panels_match_ref(DType::kF32); }
TEST(PanelProducts, Bf16PanelsMatchRef) { expect_panels_match_ref(DType::kBF16); }

void expect_onednn_matches_ref(DType dtype) {
  std::mt19937 rng(13);
  for (cpu::InstructionSet set : tested_instruction_sets()) {
    const cpu::Primitives& loops = cpu::primitives_for(set);
    for (const Problem& p : kProblems) {
      if (p.rows < 2) continue;  // one row (decode) always runs the panel loops
      const Packed m = make_packed(p, dtype, rng);
      // oneDNN runs with at most the chosen set: bf16 instructions only above AVX2.
      const cpu::InstructionSet chosen = cpu::chosen_instruction_set();
      const bool runs = chosen != cpu::InstructionSet::kPortable &&
                        (dtype == DType::kF32 || (rounds_x_to_bf16(set, dtype) && chosen != cpu::InstructionSet::kAvx2Fma));
      ASSERT_EQ(cpu::onednn_runs(loops, p.rows, m.panels), runs)
          << cpu::instruction_set_name(set) << " " << p.rows << " x " << p.out << " x " << p.in;
      if (!runs) continue;
      KernelChoices choices;
      choices.panels.set({p.rows, p.out, p.in, dtype}, {.kernel = cpu::ProductKernel::kOnednn});
      const std::vector<float> x = random_values(p.rows * p.in, rng);
      if (!rounds_x_to_bf16(set, dtype)) {
        expect_products_match_ref(set, p, m, x, x, 0, choices);
        continue;
      }
      expect_products_match_ref(set, p, m, x, x, 0x1p-8, choices);
      expect_products_match_ref(set, p, m, x, rounded_to_bf16(x), 0, choices);
    }
  }
}

TEST(OnednnProducts, F32MatchesRef) { expect_onednn_matches_ref(DType::kF32); }
TEST(OnednnProducts, Bf16WithBf16ProductsMatchesRef) {
  const std::vector<cpu::InstructionSet>& sets = tested_instruction_sets();
  if (std::find(sets.begin(), sets.end(), cpu::InstructionSet::kAvx512Bf16) == sets.end())
    std::cout << "[ skipped  ] oneDNN with bf16 weights: this processor lacks "
              << cpu::instruction_set_name(cpu::InstructionSet::kAvx512Bf16) << " (checked that it is refused)\n";
  expect_onednn_matches_ref(DType::kBF16);
}

std::vector<float> product(cpu::InstructionSet set, const Packed& m, const std::vector<float>& x, int64_t rows,
                           const KernelChoices& choices = {}) {
  std::vector<float> y(static_cast<size_t>(rows * m.panels.rows()));
  cpu::linear_with(cpu::primitives_for(set), x.data(), rows, m.panels, nullptr, choices, y.data());
  return y;
}

TEST(PanelProducts, EveryTuningChoiceGivesTheSameBits) {
  std::mt19937 rng(11);
  const Problem p{23, 50, 77};
  for (cpu::InstructionSet set : tested_instruction_sets())
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const Packed m = make_packed(p, dtype, rng);
      const std::vector<float> x = random_values(p.rows * p.in, rng);
      const std::vector<float> baseline = product(set, m, x, p.rows);
      for (int rows_per_block : cpu::kPanelRowBlocks)
        for (int64_t chunk : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{64}}) {
          KernelChoices choices;
          choices.panels.set({p.rows, p.out, p.in, dtype}, {rows_per_block, chunk});
          EXPECT_EQ(product(set, m, x, p.rows, choices), baseline)
              << cpu::instruction_set_name(set) << " rows_per_block " << rows_per_block << " row_chunk " << chunk;
        }
    }
}

TEST(PanelProducts, SameBitsAsPrefillRowForOneRow) {
  // Decode (one row) and a prefill over many rows must agree on a row they share: the KV
  // cache written during prefill is read during decode.
  std::mt19937 rng(3);
  for (cpu::InstructionSet set : tested_instruction_sets())
    for (const Problem& p : {Problem{9, 40, 100}, Problem{9, 100, 40}, Problem{5, 2000, 600}, Problem{3, 300, 77}})
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        const Packed m = make_packed(p, dtype, rng);
        const std::vector<float> x = random_values(p.rows * p.in, rng);
        const std::vector<float> all = product(set, m, x, p.rows);
        const std::vector<float> last_row(x.end() - p.in, x.end());
        EXPECT_EQ(std::vector<float>(all.end() - p.out, all.end()), product(set, m, last_row, 1))
            << cpu::instruction_set_name(set) << " " << p.out << " x " << p.in;
      }
}

TEST(PanelProducts, WiderVectorsGiveTheSameBits) {
  // A 16-lane FMA chain is the 8-lane one twice over: AVX-512's products equal AVX2's, so a
  // plan's results do not change with the vector width (bf16 products aside, which round x).
  std::mt19937 rng(5);
  const std::vector<cpu::InstructionSet>& sets = tested_instruction_sets();
  if (std::find(sets.begin(), sets.end(), cpu::InstructionSet::kAvx512) == sets.end())
    GTEST_SKIP() << "this processor lacks " << cpu::instruction_set_name(cpu::InstructionSet::kAvx512);
  for (const Problem& p : kProblems)
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const Packed m = make_packed(p, dtype, rng);
      const std::vector<float> x = random_values(p.rows * p.in, rng);
      EXPECT_EQ(product(cpu::InstructionSet::kAvx512, m, x, p.rows), product(cpu::InstructionSet::kAvx2Fma, m, x, p.rows))
          << p.rows << " x " << p.out << " x " << p.in;
    }
}

// A scaled-byte matrix of random bytes (FP8: every E4M3 value but NaN, subnormals included;
// int8 and int4: every value) and random scales per row and block, and the same values
// dequantised to f32.
struct ScaledByteMatrix {
  WeightMatrix bytes;
  WeightMatrix dequantised;
};

ScaledByteMatrix make_scaled_bytes(DType dtype, const Problem& p, int64_t block_cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, dtype == DType::kF8E4M3 ? 253 : 255);
  std::uniform_real_distribution<float> exponent(-12.0f, 0.0f);
  const int64_t row_bytes = scaled_bytes_for(dtype, p.in);
  std::vector<uint8_t> values(static_cast<size_t>(p.out * row_bytes));
  for (uint8_t& v : values) {
    const int b = byte(rng);
    v = static_cast<uint8_t>(dtype == DType::kF8E4M3 && b >= 0x7f ? b + 1 : b);  // FP8: 0x00-0x7e, 0x80-0xfe
  }
  const int64_t blocks = (p.in + block_cols - 1) / block_cols;
  std::vector<float> scales(static_cast<size_t>(p.out * blocks));
  for (float& s : scales) s = std::exp2(exponent(rng));
  std::vector<float> dequantised(static_cast<size_t>(p.out * p.in));
  for (int64_t r = 0; r < p.out; ++r) {
    if (dtype == DType::kI4)
      dequantize_int4_row(values.data() + r * row_bytes, scales.data() + r * blocks, block_cols, p.in,
                          dequantised.data() + r * p.in);
    else if (dtype == DType::kF8E4M3)
      dequantize_fp8_row(values.data() + r * p.in, scales.data() + r * blocks, block_cols, p.in,
                         dequantised.data() + r * p.in);
    else
      dequantize_int8_row(reinterpret_cast<const int8_t*>(values.data()) + r * p.in, scales.data() + r * blocks,
                          block_cols, p.in, dequantised.data() + r * p.in);
  }
  return {WeightMatrix::scaled_bytes_owning(dtype, std::move(values), FloatBuffer::owning(std::move(scales)),
                                            block_cols, p.out, p.in),
          WeightMatrix::f32(FloatBuffer::owning(std::move(dequantised)), p.out, p.in)};
}

// `m` packed into `storage`, 64-byte aligned as a plan file's offsets are.
WeightMatrix packed(const WeightMatrix& m, std::vector<std::byte>& storage) {
  storage.resize(static_cast<size_t>(WeightMatrix::panel_bytes(m.dtype(), m.rows(), m.cols(), m.block_cols())) + 64);
  std::byte* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  pack_panels(m, aligned);
  return WeightMatrix::panels_borrowing(m.dtype(), aligned, m.rows(), m.cols(), m.block_cols());
}

std::vector<float> product_of(cpu::InstructionSet set, const WeightMatrix& w, const std::vector<float>& x,
                              int64_t rows, const KernelChoices& choices = {}) {
  std::vector<float> y(static_cast<size_t>(rows * w.rows()));
  cpu::linear_with(cpu::primitives_for(set), x.data(), rows, w, nullptr, choices, y.data());
  return y;
}

// Each FP8 or int8 weight is rounded to f32 once, as dequantising does, then summed in the f32
// chain: packed or row-major, prefill or decode, every panel choice, the f32 matrix's bits
// (which F32PanelsMatchRef holds to ref). Blocks of 8 (the FP8 fixtures'), 128 (DeepSeek-V3's
// and W8A16 groups') and 5 (not dividing the inputs).
void expect_scaled_bytes_give_their_dequantised_bits(DType dtype) {
  std::mt19937 rng(17);
  for (cpu::InstructionSet set : tested_instruction_sets())
    for (int64_t block_cols : {8, 128, 5})
      for (const Problem& p : {Problem{1, 7, 13}, Problem{3, 33, 67}, Problem{17, 40, 257}, Problem{1, 129, 1000},
                               Problem{9, 70, 300}}) {
        SCOPED_TRACE(std::string(cpu::instruction_set_name(set)) + " block " + std::to_string(block_cols) + " " +
                     std::to_string(p.rows) + " x " + std::to_string(p.out) + " x " + std::to_string(p.in));
        const ScaledByteMatrix m = make_scaled_bytes(dtype, p, block_cols, rng);
        std::vector<std::byte> byte_storage, f32_storage;
        const WeightMatrix byte_panels = packed(m.bytes, byte_storage), f32_panels = packed(m.dequantised, f32_storage);
        const std::vector<float> x = random_values(p.rows * p.in, rng);
        const std::vector<float> last_row(x.end() - p.in, x.end());
        EXPECT_EQ(product_of(set, m.bytes, x, p.rows), product_of(set, m.dequantised, x, p.rows));
        EXPECT_EQ(product_of(set, m.bytes, last_row, 1), product_of(set, m.dequantised, last_row, 1));
        EXPECT_EQ(product_of(set, byte_panels, last_row, 1), product_of(set, f32_panels, last_row, 1));
        for (int rows_per_block : cpu::kPanelRowBlocks) {
          KernelChoices choices;
          choices.panels.set({p.rows, p.out, p.in, dtype}, {rows_per_block, 0});
          choices.panels.set({p.rows, p.out, p.in, DType::kF32}, {rows_per_block, 0});
          EXPECT_EQ(product_of(set, byte_panels, x, p.rows, choices), product_of(set, f32_panels, x, p.rows, choices))
              << "rows_per_block " << rows_per_block;
        }
      }
}

TEST(PanelProducts, Fp8GivesTheBitsOfItsDequantisedMatrix) {
  expect_scaled_bytes_give_their_dequantised_bits(DType::kF8E4M3);
}

TEST(PanelProducts, Int8GivesTheBitsOfItsDequantisedMatrix) {
  expect_scaled_bytes_give_their_dequantised_bits(DType::kI8);
}

TEST(PanelProducts, Int4GivesTheBitsOfItsDequantisedMatrix) {
  expect_scaled_bytes_give_their_dequantised_bits(DType::kI4);
}

TEST(PanelPacking, RangesOfPanelsPackedOneAfterAnotherGiveTheWholeMatrixsBytes) {
  // The compile step packs a matrix a range of panels at a time (scaled bytes' scales with the
  // last).
  std::mt19937 rng(5);
  const Problem p{1, 70, 40};  // 5 panels, the last padded
  const ScaledByteMatrix fp8 = make_scaled_bytes(DType::kF8E4M3, p, 8, rng);
  const ScaledByteMatrix int4 = make_scaled_bytes(DType::kI4, p, 8, rng);
  const std::vector<float> values = random_values(p.out * p.in, rng);
  const WeightMatrix f32 = WeightMatrix::f32(FloatBuffer::owning(values), p.out, p.in);
  for (const WeightMatrix* m : {&fp8.bytes, &int4.bytes, &f32}) {
    std::vector<std::byte> whole;
    packed(*m, whole);
    std::vector<std::byte> pieces(whole.size());
    const std::ptrdiff_t offset = (64 - reinterpret_cast<uintptr_t>(pieces.data()) % 64) % 64;
    for (int64_t first = 0; first < m->panel_count(); first += 2)
      pack_panel_range(*m, first, std::min(m->panel_count(), first + 2), pieces.data() + offset);
    const std::ptrdiff_t whole_offset = (64 - reinterpret_cast<uintptr_t>(whole.data()) % 64) % 64;
    const size_t bytes = static_cast<size_t>(WeightMatrix::panel_bytes(m->dtype(), p.out, p.in, m->block_cols()));
    EXPECT_TRUE(std::equal(whole.begin() + whole_offset, whole.begin() + whole_offset + bytes, pieces.begin() + offset))
        << dtype_name(m->dtype());
  }
}

TEST(PanelPacking, Bf16ProductsPackAnF32MatrixAsItsBf16Rounding) {
  // --products bf16: an f32 matrix's panels are those of the bf16 checkpoint torch's
  // .to(bfloat16) would give; a bf16 matrix packs as stored either way.
  std::mt19937 rng(9);
  const Problem p{1, 40, 24};  // 3 panels, the last padded
  const std::vector<float> values = random_values(p.out * p.in, rng);
  std::vector<uint16_t> rounded(values.size());
  std::transform(values.begin(), values.end(), rounded.begin(), f32_to_bf16);
  const WeightMatrix f32 = WeightMatrix::f32(FloatBuffer::owning(values), p.out, p.in);
  const WeightMatrix bf16 = WeightMatrix::bf16_owning(rounded, p.out, p.in);
  EXPECT_EQ(packed_dtype(f32, DType::kBF16), DType::kBF16);
  EXPECT_EQ(packed_dtype(f32, DType::kF32), DType::kF32);
  EXPECT_EQ(packed_dtype(bf16, DType::kBF16), DType::kBF16);
  const size_t bytes = static_cast<size_t>(WeightMatrix::panel_bytes(DType::kBF16, p.out, p.in, 0));
  std::vector<std::byte> from_f32(bytes), from_bf16(bytes);
  pack_panels(f32, from_f32.data(), DType::kBF16);
  pack_panels(bf16, from_bf16.data(), DType::kBF16);
  EXPECT_EQ(from_f32, from_bf16);
}

TEST(PanelProducts, Fp8NanBytesStayNan) {
  // 0x7f and 0xff are E4M3's NaNs; the f16 reading of the vector sets would make them 480.
  const Problem p{1, 16, 32};
  std::vector<uint8_t> values(static_cast<size_t>(p.out * p.in), 0x38);  // 1.0
  values[3 * p.in + 5] = 0x7f;
  values[9 * p.in + 31] = 0xff;
  const WeightMatrix m = WeightMatrix::scaled_bytes_owning(
      DType::kF8E4M3, values, FloatBuffer::owning(std::vector<float>(p.out * 4, 1.0f)), 8, p.out, p.in);
  std::vector<std::byte> storage;
  const WeightMatrix panels = packed(m, storage);
  const std::vector<float> x(static_cast<size_t>(p.in), 1.0f);
  for (cpu::InstructionSet set : tested_instruction_sets()) {
    const std::vector<float> y = product_of(set, panels, x, 1);
    for (int64_t o = 0; o < p.out; ++o)
      EXPECT_EQ(std::isnan(y[o]), o == 3 || o == 9) << cpu::instruction_set_name(set) << " output " << o;
  }
}

// FP8, and int4 with an odd width (a row's last byte half used).
TEST(WeightMatrix, ScaledByteRowsSliceStackAndWidenWithTheirScales) {
  std::mt19937 rng(19);
  for (const auto& [dtype, cols] : {std::pair{DType::kF8E4M3, int64_t{30}}, std::pair{DType::kI4, int64_t{31}}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const ScaledByteMatrix m = make_scaled_bytes(dtype, {1, 20, cols}, 8, rng);
    std::vector<float> row(cols), expected(cols);
    const WeightMatrix part = m.bytes.slice_rows(5, 10);
    part.copy_row(3, row.data());
    m.dequantised.copy_row(8, expected.data());
    EXPECT_EQ(row, expected);
    const WeightMatrix parts[] = {m.bytes.slice_rows(0, 5), m.bytes.slice_rows(5, 15)};
    const WeightMatrix whole = WeightMatrix::stack(parts);
    EXPECT_EQ(whole.dtype(), dtype);
    whole.copy_row(19, row.data());
    m.dequantised.copy_row(19, expected.data());
    EXPECT_EQ(row, expected);
    EXPECT_THROW(m.bytes.transposed(), Error);
  }
  // 32 padded rows of 30 bytes (960, then 64-aligned: 960), then 32 x 4 blocks of scales; int4:
  // 32 rows of 31 nibbles (496, aligned: 512), then 32 x 4 blocks of scales.
  EXPECT_EQ(WeightMatrix::panel_bytes(DType::kF8E4M3, 20, 30, 8), 960 + 32 * 4 * 4);
  EXPECT_EQ(WeightMatrix::panel_bytes(DType::kI4, 20, 31, 8), 512 + 32 * 4 * 4);
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
