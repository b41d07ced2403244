#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void layer_norm(const float* x, const float* weight, const float* bias, int64_t rows, int64_t dim, float eps,
                float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * dim;
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += row[i];
    const double mean = sum / static_cast<double>(dim);
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += (row[i] - mean) * (row[i] - mean);
    const float inv_std = static_cast<float>(1.0 / std::sqrt(sum_squares / static_cast<double>(dim) + eps));
    const float mean_f = static_cast<float>(mean);
    for (int64_t i = 0; i < dim; ++i) {
      const float normed = (row[i] - mean_f) * inv_std;
      y[r * dim + i] = bias != nullptr ? normed * weight[i] + bias[i] : normed * weight[i];
    }
  }
}

}  // namespace canrun::ref
