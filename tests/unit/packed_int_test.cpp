// compressed-tensors' pack-quantized words: values offset by 2^(bits - 1), little-endian within
// each int32 word, and the dequantised weight rounded to the scale's type. The words below are
// what compressed-tensors 0.20.1's pack_to_int32 writes for the listed values.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/packed_int.h"

namespace canrun {
namespace {

TEST(PackedInt, Int4ValuesAreNibblesFromTheLowEnd) {
  const uint32_t word = 0xcba9f870;  // -8, -1, 0, 7, 1, 2, 3, 4
  const std::vector<int32_t> expected = {-8, -1, 0, 7, 1, 2, 3, 4};
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(packed_int_value(&word, i, 4), expected[i]) << "value " << i;
}

TEST(PackedInt, Int8ValuesAreBytesFromTheLowEnd) {
  const uint32_t words[2] = {0xff807f00, 0x00000081};  // -128, -1, 0, 127, then 1
  const std::vector<int32_t> expected = {-128, -1, 0, 127, 1};
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(packed_int_value(words, i, 8), expected[i]) << "value " << i;
}

// Two rows of 8 int4 values in groups of 4; columns 2..5 of row 1 cross its two groups.
TEST(PackedInt, AColumnBlockTakesEachColumnsGroupScaleAndRoundsToTheScalesType) {
  const uint32_t words[2] = {0xcba9f870, 0x0f87654a};  // row 1: 2, -4, -3, -2, -1, 0, 7, -8
  const PackedIntScheme scheme{4, 4};
  const std::vector<float> f32_scales = {0.5f, 0.25f, 0.1f, 3.0f};
  std::vector<float> out(4);
  dequantize_packed_int(words, reinterpret_cast<const std::byte*>(f32_scales.data()), DType::kF32, 8, scheme, 1, 1,
                        2, 4, reinterpret_cast<std::byte*>(out.data()));
  EXPECT_EQ(out, (std::vector<float>{-3 * 0.1f, -2 * 0.1f, -1 * 3.0f, 0.0f}));

  const std::vector<uint16_t> bf16_scales = {f32_to_bf16(0.5f), f32_to_bf16(0.25f), f32_to_bf16(0.1f),
                                             f32_to_bf16(3.0f)};
  std::vector<uint16_t> rounded(4);
  dequantize_packed_int(words, reinterpret_cast<const std::byte*>(bf16_scales.data()), DType::kBF16, 8, scheme, 1,
                        1, 2, 4, reinterpret_cast<std::byte*>(rounded.data()));
  // -3 times bf16(0.1) needs more than bf16's 8 significant bits: it is rounded once.
  EXPECT_EQ(rounded[0], f32_to_bf16(-3 * bf16_to_f32(f32_to_bf16(0.1f))));
  EXPECT_NE(bf16_to_f32(rounded[0]), -3 * bf16_to_f32(f32_to_bf16(0.1f)));
  EXPECT_EQ(bf16_to_f32(rounded[2]), -3.0f);
}

}  // namespace
}  // namespace canrun
