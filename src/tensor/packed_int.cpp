#include "tensor/packed_int.h"

#include <vector>

namespace canrun {

int32_t packed_int_value(const uint32_t* row_words, int64_t col, int bits) {
  const int64_t bit = col * bits;
  const int64_t word = bit / 32;
  const int shift = static_cast<int>(bit % 32);
  uint64_t window = row_words[word] >> shift;
  if (shift + bits > 32) window |= static_cast<uint64_t>(row_words[word + 1]) << (32 - shift);
  const uint32_t mask = (uint32_t{1} << bits) - 1;
  return static_cast<int32_t>(window & mask) - (int32_t{1} << (bits - 1));
}

void dequantize_packed_int(const uint32_t* words, const std::byte* scales, DType scale_dtype, int64_t in,
                           PackedIntScheme scheme, int64_t first_row, int64_t rows, int64_t first_col, int64_t cols,
                           std::byte* out) {
  const int64_t groups = scheme.groups(in), row_words = scheme.words_per_row(in);
  const size_t element = dtype_size(scale_dtype);
  std::vector<float> row_scales(static_cast<size_t>(groups)), values(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const uint32_t* row = words + (first_row + r) * row_words;
    widen_to_f32(scale_dtype, scales + static_cast<size_t>((first_row + r) * groups) * element,
                 static_cast<size_t>(groups), row_scales.data());
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t col = first_col + c;
      const float scale = row_scales[static_cast<size_t>(scheme.group_size > 0 ? col / scheme.group_size : 0)];
      // Exact in f32 for a bf16 or f16 scale, so rounding to the scale's type below is the one
      // rounding compressed-tensors' product in that type makes.
      values[static_cast<size_t>(c)] = static_cast<float>(packed_int_value(row, col, scheme.bits)) * scale;
    }
    narrow_from_f32(scale_dtype, values.data(), static_cast<size_t>(cols),
                    out + static_cast<size_t>(r * cols) * element);
  }
}

void dequantize_int4_row(const uint8_t* nibbles, const float* scales, int64_t block_cols, int64_t cols, float* out) {
  for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(int4_value(nibbles, c)) * scales[c / block_cols];
}

void dequantize_int8_row(const int8_t* values, const float* scales, int64_t block_cols, int64_t cols, float* out) {
  for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(values[c]) * scales[c / block_cols];
}

}  // namespace canrun
