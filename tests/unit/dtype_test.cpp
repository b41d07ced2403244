// f32 rounded to bf16 and f16 (what a bf16 / f16 KV cache stores): to nearest, ties to even,
// as torch's .to() rounds; NaN stays NaN; f16 overflows to infinity and keeps its subnormals.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/fp8.h"

namespace canrun {
namespace {

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(DType, F32RoundsToBf16NearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808001)), 0x3f81);  // past the tie
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(from_bits(0x7f800001)))));  // a NaN whose payload rounds away
}

TEST(DType, F32RoundsToF16NearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.5f), 0xc100);
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);             // tie, even stays
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie, odd rounds up
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                    // overflows to infinity
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);                    // the smallest subnormal
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, NarrowedValuesWidenBackWithinHalfAStep) {
  const std::vector<float> values = {0.0f, 1.0f / 3, -7.123f, 1e-3f, 300.5f};
  for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    std::vector<std::byte> stored(values.size() * dtype_size(dtype));
    narrow_from_f32(dtype, values.data(), values.size(), stored.data());
    std::vector<float> back(values.size());
    widen_to_f32(dtype, stored.data(), values.size(), back.data());
    const float step = dtype == DType::kF32 ? 0 : dtype == DType::kBF16 ? 0x1p-8f : 0x1p-11f;
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_LE(std::abs(back[i] - values[i]), step * std::abs(values[i])) << dtype_name(dtype) << " " << values[i];
  }
}

// E4M3 (float8_e4m3fn): bias 7, three mantissa bits, subnormals, no infinities.
TEST(DType, Fp8E4m3Values) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0xc0), -2.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);              // the largest
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_f32(0x08), std::ldexp(1.0f, -6));  // the smallest normal
  EXPECT_EQ(fp8_e4m3_to_f32(0x33), 0.6875f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x80), 0.0f);
  EXPECT_TRUE(std::signbit(fp8_e4m3_to_f32(0x80)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0xff)));
  EXPECT_EQ(fp8_e4m3_to_f32(0x78), 256.0f);  // exponent 15 is a number but for mantissa 7
}

// Each value times its block's scale; blocks that run past the matrix's edge are partial.
TEST(DType, Fp8DequantizesByBlock) {
  const int64_t rows = 3, in = 5;
  std::vector<std::byte> values(static_cast<size_t>(rows * in), std::byte{0x38});  // 1.0 each
  const std::vector<float> scales = {1, 2, 3, 4, 5, 6};  // a 2 x 3 grid of 2 x 2 blocks
  std::vector<float> out(static_cast<size_t>(2 * 3));
  dequantize_fp8(values.data(), scales.data(), in, {2, 2}, 1, 2, 2, 3, out.data());  // rows 1-2, cols 2-4
  EXPECT_EQ(out, (std::vector<float>{2, 2, 3, 5, 5, 6}));
}

}  // namespace
}  // namespace canrun
