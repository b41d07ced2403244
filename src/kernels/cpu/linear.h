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
// The same product with one instruction set's loops (primitives_for), whichever set is chosen.
void linear_with(const Primitives& loops, const float* x, int64_t rows, const WeightMatrix& w, const float* bias,
                 const KernelChoices& choices, float* y);

}  // namespace canrun::cpu
