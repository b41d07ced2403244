#include "kernels/ref/ops.h"

namespace canrun::ref {

void apply_rotary(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                  const float* sin) {
  const int64_t half = rotary_dim / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = v[i];
      const float b = v[i + half];
      v[i] = a * cos[i] - b * sin[i];
      v[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace canrun::ref

namespace canrun::ref {

void apply_rotary_interleaved(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                              const float* sin) {
  const int64_t half = rotary_dim / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = v[2 * i];
      const float b = v[2 * i + 1];
      v[2 * i] = a * cos[i] - b * sin[i];
      v[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace canrun::ref
