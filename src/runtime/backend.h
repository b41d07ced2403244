// Which kernels run a model: `ref` (plain f32, double accumulation, every weight widened to
// f32: the yardstick) or `cpu` (bf16 weights kept as bf16, f32 accumulation, AVX2). The
// choice is made once at load; linear() is the one place the runtime's matrix products
// follow it.
#pragma once

#include <cstdint>
#include <string_view>

#include "tensor/weight_matrix.h"

namespace canrun {

enum class Backend { kRef, kCpu };

std::string_view backend_name(Backend backend);
// Throws Error(kUsage) naming `option` for anything but "ref" or "cpu".
Backend parse_backend(std::string_view name, std::string_view option);

// y[rows, w.rows()] = x[rows, w.cols()] @ w^T (+ bias when not null) on `backend`.
void linear(Backend backend, const float* x, int64_t rows, const WeightMatrix& w, const float* bias, float* y);

}  // namespace canrun
