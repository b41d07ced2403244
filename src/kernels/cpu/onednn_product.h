// Prefill products through oneDNN's matmul (Debian libdnnl-dev): a choice the compile step's
// tuner makes per shape, where it measures faster than the panel loops. The packed panels go to
// oneDNN as they are (an [in, out] matrix blocked by 16 outputs) and are reordered into the
// matmul's weight layout on each call, so no second copy of the weights stays in memory; the
// tuner's timings include that reorder.
//
// Numerics: f32 weights run oneDNN's f32 matmul. bf16 weights run only with a set that has bf16
// products (x86_64-avx512-bf16): x is rounded to bf16 by that set's round_rows_bf16 and the
// products are summed in f32, as in the bf16-product loops. Either way oneDNN sums in its own
// order, so results are within f32 rounding of the panels' (the tolerances of
// tests/unit/panel_kernels_test.cpp), not the same bits. oneDNN runs with at most the chosen
// instruction set (AVX2, or AVX-512 with its bf16 instructions where the processor has them).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cpu/primitives.h"
#include "tensor/weight_matrix.h"

namespace canrun::cpu {

// Whether onednn_product can run this product with `loops`: w packed, rows >= 1, the chosen set
// not portable, bf16 weights only with loops that have bf16 products, and oneDNN has an
// optimised (not reference) implementation of it on this processor.
bool onednn_runs(const Primitives& loops, int64_t rows, const WeightMatrix& w);
// y[rows, w.rows()] = x[rows, w.cols()] @ w^T; only where onednn_runs. A oneDNN failure is an
// Error(kRuntime) naming the product's shape.
void onednn_product(const Primitives& loops, const float* x, int64_t rows, const WeightMatrix& w, float* y);
// The library's version, "2.6.3".
std::string onednn_version();

}  // namespace canrun::cpu
