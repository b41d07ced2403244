// Repacking a row-major weight matrix into the panels the cpu backend's compiled kernels read
// (WeightMatrix's layout comment), keeping its dtype.
#pragma once

#include <cstddef>

#include "tensor/weight_matrix.h"

namespace canrun {

// Writes `m` (row-major, f32, bf16 or FP8) as panels to `dst`, which holds
// WeightMatrix::panel_bytes(m.dtype(), m.rows(), m.cols(), m.block_cols()) bytes and is 64-byte
// aligned.
void pack_panels(const WeightMatrix& m, std::byte* dst);
// Only panels [first, end) of them (`dst` as above, for the whole matrix); FP8 scales with the
// last panel.
void pack_panel_range(const WeightMatrix& m, int64_t first, int64_t end, std::byte* dst);

}  // namespace canrun
