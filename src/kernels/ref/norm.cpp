#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * dim;
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += static_cast<double>(row[i]) * row[i];
    const float inv_rms = 1.0f / std::sqrt(static_cast<float>(sum_squares / dim) + eps);
    for (int64_t i = 0; i < dim; ++i) y[r * dim + i] = weight[i] * (row[i] * inv_rms);
  }
}

}  // namespace canrun::ref
