// FP8 E4M3 (float8_e4m3fn) weights with a float scale per block, as DeepSeek-V3, Kimi-K2,
// MiniMax-M2 and the Qwen3 FP8 checkpoints publish them (quantization_config quant_method fp8,
// weight_block_size [rows, cols]): weight = value * weight_scale_inv[row / rows][col / cols].
#pragma once

#include <cstddef>
#include <cstdint>

namespace canrun {

// E4M3 with no infinities: bias 7, subnormals, 0x7f / 0xff NaN. Exact in f32.
float fp8_e4m3_to_f32(uint8_t bits);

struct Fp8Block {
  int64_t rows = 0, cols = 0;  // 0: the checkpoint is not FP8
  bool present() const { return rows > 0; }
};

// Rows [first_row, first_row + rows) and columns [first_col, first_col + cols) of an FP8 matrix
// of `in` columns, times their blocks' scales (grid of ceil(in / block.cols) columns), into `out`
// (rows x cols floats).
void dequantize_fp8(const std::byte* values, const float* scales, int64_t in, Fp8Block block, int64_t first_row,
                    int64_t rows, int64_t first_col, int64_t cols, float* out);

// One row of `cols` FP8 values times their scales, one scale per `block_cols` values, into
// `out`; each product rounds once, as in dequantize_fp8.
void dequantize_fp8_row(const uint8_t* values, const float* scales, int64_t block_cols, int64_t cols, float* out);

}  // namespace canrun
