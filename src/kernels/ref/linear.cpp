#include "kernels/ref/ops.h"

#include <vector>

namespace canrun::ref {
namespace {

// Dot product in double with eight independent partial sums: near exact, and the adds do not
// wait on each other, so ref stays fast enough to be the yardstick for multi-billion models.
double dot(const float* x, const float* w, int64_t n) {
  constexpr int64_t kLanes = 8;
  double partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t lane = 0; lane < kLanes; ++lane) partial[lane] += static_cast<double>(x[i + lane]) * w[i + lane];
  }
  for (; i < n; ++i) partial[0] += static_cast<double>(x[i]) * w[i];
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

}  // namespace

void linear(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t out, float* y) {
  // Each output is computed the same way whatever the thread count, so results do not depend on it.
#pragma omp parallel for collapse(2) schedule(static) if (rows * out * in > (1 << 20))
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      const double acc = dot(x + r * in, w + o * in, in);
      y[r * out + o] = static_cast<float>(bias != nullptr ? acc + bias[o] : acc);
    }
  }
}

void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, float* y) {
  const int64_t in = w.cols(), out = w.rows();
  // Each weight row is widened once, for all input rows; f32 and the stored dtype's widening
  // give the same values, so the result is the one ref::linear gives on the widened matrix.
#pragma omp parallel if (rows * out * in > (1 << 20))
  {
    std::vector<float> widened(static_cast<size_t>(in));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < out; ++o) {
      w.copy_row(o, widened.data());
      for (int64_t r = 0; r < rows; ++r) {
        const double acc = dot(x + r * in, widened.data(), in);
        y[r * out + o] = static_cast<float>(bias != nullptr ? acc + bias[o] : acc);
      }
    }
  }
}

}  // namespace canrun::ref
