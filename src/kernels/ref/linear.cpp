#include "kernels/ref/ops.h"

namespace canrun::ref {

void linear(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t out, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    for (int64_t o = 0; o < out; ++o) {
      const float* wo = w + o * in;
      // Double accumulation keeps ref close to exact, so it is a fair yardstick.
      double acc = bias != nullptr ? bias[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(xr[i]) * wo[i];
      y[r * out + o] = static_cast<float>(acc);
    }
  }
}

}  // namespace canrun::ref
