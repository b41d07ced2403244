#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void softcap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] / cap) * cap;
}

}  // namespace canrun::ref
