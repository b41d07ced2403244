// Integer weights packed into int32 words, as compressed-tensors' `pack-quantized` format
// (llm-compressor's W4A16 and W8A16 checkpoints) stores them: "<name>.weight_packed" holds each
// row's values as one little-endian bit stream, value i at bits [i * bits, (i + 1) * bits),
// offset by 2^(bits - 1); "<name>.weight_scale" holds a scale per row and group of group_size
// inputs (one group per row for per-channel scales). weight = (value - offset) * scale, the
// product rounded to the scale's type, as compressed-tensors dequantises it.
//
// GPTQ checkpoints (AutoGPTQ, GPTQModel) pack the other way round: "<name>.qweight" holds each
// input row's values for every output, 32 / bits inputs to an int32 word (input i of a word at
// bits [(i % per word) * bits, ...)), "<name>.scales" a scale per group of inputs and output
// ([groups, out]), "<name>.qzeros" each zero point packed along the outputs (minus one in the v1
// layout), "<name>.g_idx" each input's group. weight = (value - zero) * scale.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"

namespace canrun {

// Which of the two layouts above a checkpoint's matrices have.
enum class IntPacking { kCompressedTensors, kGptq };

struct PackedIntScheme {
  int bits = 0;             // 0: the checkpoint's matrices are not packed integers
  int64_t group_size = 0;   // 0: one scale per row (strategy channel)
  IntPacking packing = IntPacking::kCompressedTensors;
  // GPTQ: what every stored qzeros value is for symmetric weights (2^(bits-1), minus one in the
  // v1 layout).
  int32_t stored_zero = 0;
  bool present() const { return bits > 0; }
  int64_t groups(int64_t in) const { return group_size > 0 ? (in + group_size - 1) / group_size : 1; }
  int64_t words_per_row(int64_t in) const { return (in * bits + 31) / 32; }
};

// The signed value at column `col` of a row of packed words.
int32_t packed_int_value(const uint32_t* row_words, int64_t col, int bits);

// Rows [first_row, first_row + rows) and columns [first_col, first_col + cols) of a packed
// matrix of `in` columns, times their scales (stored as `scale_dtype`, `groups(in)` per row),
// into `out` as `scale_dtype` values (rows x cols, element size dtype_size(scale_dtype)).
void dequantize_packed_int(const uint32_t* words, const std::byte* scales, DType scale_dtype, int64_t in,
                           PackedIntScheme scheme, int64_t first_row, int64_t rows, int64_t first_col, int64_t cols,
                           std::byte* out);

// One row of `cols` int8 values times their scales, one scale per `block_cols` values, into
// `out`; each product rounds once in f32 (WeightMatrix's int8 rows, widened).
void dequantize_int8_row(const int8_t* values, const float* scales, int64_t block_cols, int64_t cols, float* out);
// The same over int4 stored two to a byte as value + 8, the first in the low nibble.
void dequantize_int4_row(const uint8_t* nibbles, const float* scales, int64_t block_cols, int64_t cols, float* out);

// The int4 value at `col` of a row of nibbles stored as value + 8, the first in the low nibble.
inline int32_t int4_value(const uint8_t* nibbles, int64_t col) {
  return static_cast<int32_t>((nibbles[col / 2] >> (4 * (col % 2))) & 0xf) - 8;
}

}  // namespace canrun
