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

}  // namespace canrun
