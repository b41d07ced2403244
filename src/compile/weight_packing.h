// Repacking a row-major weight matrix into the panels the cpu backend's compiled kernels read
// (WeightMatrix's layout comment), keeping its dtype or rounding f32 to bf16.
#pragma once

#include <cstddef>

#include "tensor/weight_matrix.h"

namespace canrun {

// The dtype of `m`'s panels when f32 matrices are packed as `products`: kF32 keeps every dtype
// as stored; kBF16 rounds f32 matrices to bf16 (to nearest even, as torch's .to(bfloat16)),
// half their bytes, multiplied as a bf16 checkpoint's are.
DType packed_dtype(const WeightMatrix& m, DType products);

// Writes `m` (row-major, f32, bf16 or FP8) as panels of packed_dtype(m, products) to `dst`,
// which holds WeightMatrix::panel_bytes(packed_dtype(m, products), m.rows(), m.cols(),
// m.block_cols()) bytes and is 64-byte aligned.
void pack_panels(const WeightMatrix& m, std::byte* dst, DType products = DType::kF32);
// Only panels [first, end) of them (`dst` as above, for the whole matrix); FP8 scales with the
// last panel.
void pack_panel_range(const WeightMatrix& m, int64_t first, int64_t end, std::byte* dst,
                      DType products = DType::kF32);

}  // namespace canrun
