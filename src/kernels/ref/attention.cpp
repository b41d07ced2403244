#include "kernels/ref/ops.h"

namespace canrun::ref {

void attend(const float* q, const float* keys, const float* values, int64_t stride, int64_t first,
            int64_t last, int64_t head_dim, float scale, float* scratch, float* out) {
  const int64_t count = last - first + 1;
  for (int64_t p = 0; p < count; ++p) {
    const float* k = keys + (first + p) * stride;
    double dot = 0.0;
    for (int64_t d = 0; d < head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
    scratch[p] = static_cast<float>(dot) * scale;
  }
  softmax(scratch, count);
  for (int64_t d = 0; d < head_dim; ++d) {
    double acc = 0.0;
    for (int64_t p = 0; p < count; ++p) acc += static_cast<double>(scratch[p]) * values[(first + p) * stride + d];
    out[d] = static_cast<float>(acc);
  }
}

}  // namespace canrun::ref
