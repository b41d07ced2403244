#include "tensor/fp8.h"

#include <cmath>
#include <limits>

namespace canrun {

float fp8_e4m3_to_f32(uint8_t bits) {
  const int exponent = (bits >> 3) & 0xf, mantissa = bits & 0x7;
  const float sign = (bits & 0x80) != 0 ? -1.0f : 1.0f;
  if (exponent == 0xf && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

void dequantize_fp8(const std::byte* values, const float* scales, int64_t in, Fp8Block block, int64_t first_row,
                    int64_t rows, int64_t first_col, int64_t cols, float* out) {
  const int64_t grid_cols = (in + block.cols - 1) / block.cols;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = first_row + r;
    const float* row_scales = scales + (row / block.rows) * grid_cols;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t col = first_col + c;
      out[r * cols + c] = fp8_e4m3_to_f32(static_cast<uint8_t>(values[row * in + col])) * row_scales[col / block.cols];
    }
  }
}

void dequantize_fp8_row(const uint8_t* values, const float* scales, int64_t block_cols, int64_t cols, float* out) {
  for (int64_t c = 0; c < cols; ++c) out[c] = fp8_e4m3_to_f32(values[c]) * scales[c / block_cols];
}

}  // namespace canrun
