// The `cpu` backend's matrix products: f32 accumulation, weights as f32 or bf16, with the
// chosen instruction set's loops (chosen at run time; the build stays baseline x86-64), OpenMP
// over output rows. Results do not depend on the thread count.
#pragma once

#include <cstdint>

#include "kernels/cpu/primitives.h"
#include "kernels/kernel_choices.h"
#include "tensor/weight_matrix.h"

namespace canrun::cpu {

// y[rows, w.rows()] = x[rows, w.cols()] @ w^T (+ bias[w.rows()] when not null). Row-major
// weights: one row (decode) streams each weight once; more rows (prefill) widen a tile of
// weight rows to f32 once and reuse it for every row of x. Packed panels (compiled): as
// `choices` say for the shape (panel_choices.h): the panel loops, or oneDNN's matmul.
void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, const KernelChoices& choices,
            float* y);
// x's rows rounded to bf16 by p.round_rows_bf16 (p must have bf16 products), each row padded to
// rounded_row_stride(n), in a buffer of the calling thread's that the next call reuses.
const uint16_t* rows_rounded_to_bf16(const Primitives& p, const float* x, int64_t rows, int64_t n);
// The same product with one instruction set's loops (primitives_for), whichever set is chosen.
void linear_with(const Primitives& loops, const float* x, int64_t rows, const WeightMatrix& w, const float* bias,
                 const KernelChoices& choices, float* y);

}  // namespace canrun::cpu
