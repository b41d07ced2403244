#include <cmath>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void normalize_scores(float* scores, int64_t count, float cap, const float* sink, ExpShifted exp) {
  if (cap > 0) softcap(scores, count, cap);
  // A sink takes part in the maximum and the sum, and then has no output of its own.
  float max_value = sink != nullptr ? *sink : scores[0];
  for (int64_t p = 0; p < count; ++p) max_value = scores[p] > max_value ? scores[p] : max_value;
  const double sum = exp(scores, count, max_value, sink != nullptr ? std::exp(*sink - max_value) : 0.0);
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t p = 0; p < count; ++p) scores[p] *= inv;
}

void attend(const float* q, const float* keys, int64_t key_dim, const float* values, int64_t value_dim,
            int64_t first, int64_t last, float scale, float cap, const float* sink, float* scratch, float* out) {
  const int64_t count = last - first + 1;
  for (int64_t p = 0; p < count; ++p) {
    const float* k = keys + (first + p) * key_dim;
    double dot = 0.0;
    for (int64_t d = 0; d < key_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
    scratch[p] = static_cast<float>(dot) * scale;
  }
  normalize_scores(scratch, count, cap, sink);
  for (int64_t d = 0; d < value_dim; ++d) {
    double acc = 0.0;
    for (int64_t p = 0; p < count; ++p) acc += static_cast<double>(scratch[p]) * values[(first + p) * value_dim + d];
    out[d] = static_cast<float>(acc);
  }
}

}  // namespace canrun::ref
