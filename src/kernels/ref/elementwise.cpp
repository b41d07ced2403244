#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void softcap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] / cap) * cap;
}

void scale(float* x, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void add_scaled(float* x, const float* y, int64_t n, float s) {
  if (s == 1.0f) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) x[i] += y[i] * s;
}

}  // namespace canrun::ref
