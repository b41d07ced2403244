#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ref/ops.h"

namespace canrun::ref {
namespace {

constexpr int64_t kParallelAttentionWork = 1 << 16;  // multiply-adds of q·k

}  // namespace

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

void attention_with(const AttentionArgs& a, HeadAttend attend) {
  const int64_t group = a.heads / a.kv_heads;
  const int64_t q_width = a.heads * a.key_dim, out_width = a.heads * a.value_dim;
  // Later queries see more positions, hence dynamic scheduling. A short decode step stays on
  // one thread: a parallel region's barrier would cost more than it saves.
  const int64_t work = a.tokens * a.heads * (a.start + a.tokens) * a.key_dim;
#pragma omp parallel if (work > kParallelAttentionWork)
  {
    std::vector<float> scores(a.start + a.tokens);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t t = 0; t < a.tokens; ++t) {
      for (int64_t kv_head = 0; kv_head < a.kv_heads; ++kv_head) {
        const int64_t position = a.start + t;
        const int64_t first = a.window > 0 ? std::max<int64_t>(0, position - a.window + 1) : 0;
        // The kv head's query heads on one thread, which reads its cached keys and values from
        // memory once and then from its cache.
        for (int64_t h = kv_head * group; h < (kv_head + 1) * group; ++h)
          attend(a.q + t * q_width + h * a.key_dim, a.keys + kv_head * a.key_stride, a.key_dim,
                 a.values + kv_head * a.value_stride, a.value_dim, first, position, a.scale, a.softcap,
                 a.sinks == nullptr ? nullptr : a.sinks + h, scores.data(), a.out + t * out_width + h * a.value_dim);
      }
    }
  }
}

void attention(const AttentionArgs& args) { attention_with(args, attend); }

}  // namespace canrun::ref
