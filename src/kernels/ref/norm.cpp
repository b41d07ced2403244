#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * dim;
    // Four running sums: one chain of dependent double adds would wait on each add's latency.
    double sums[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 4 <= dim; i += 4)
      for (int j = 0; j < 4; ++j) sums[j] += static_cast<double>(row[i + j]) * row[i + j];
    for (; i < dim; ++i) sums[0] += static_cast<double>(row[i]) * row[i];
    const double sum_squares = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    const float inv_rms = 1.0f / std::sqrt(static_cast<float>(sum_squares / dim) + eps);
    for (int64_t i = 0; i < dim; ++i) y[r * dim + i] = weight[i] * (row[i] * inv_rms);
  }
}

}  // namespace canrun::ref
