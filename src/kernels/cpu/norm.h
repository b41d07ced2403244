// The cpu backend's RMSNorm and LayerNorm: ref's loops, with the rows of a prompt split over
// the threads. Each row is normalised on its own, so the bits are ref's for any thread count.
#pragma once

#include <cstdint>

namespace canrun::cpu {

void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y);
void layer_norm(const float* x, const float* weight, const float* bias, int64_t rows, int64_t dim, float eps,
                float* y);

}  // namespace canrun::cpu
