#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/ops.h"
#include "tensor/dtype.h"

namespace canrun::ref {
namespace {

constexpr int64_t kParallelAttentionWork = 1 << 16;  // multiply-adds of q·k

// Value d of a cached row, widened to f32.
float cached_value(const CachedRows& rows, int64_t position, int64_t d) {
  const int64_t i = position * rows.dim + d;
  switch (rows.dtype) {
    case DType::kF32: return static_cast<const float*>(rows.data)[i];
    case DType::kBF16: return bf16_to_f32(static_cast<const uint16_t*>(rows.data)[i]);
    case DType::kF16: return f16_to_f32(static_cast<const uint16_t*>(rows.data)[i]);
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI4: break;  // weight formats, never a cache's
  }
  return 0;
}

}  // namespace

void normalize_scores(float* scores, int64_t count, float cap, const float* sink, const SoftmaxLoops& loops,
                      const uint8_t* keep) {
  if (cap > 0) softcap(scores, count, cap);
  if (keep != nullptr)
    for (int64_t p = 0; p < count; ++p)
      if (keep[p] == 0) scores[p] = -std::numeric_limits<float>::infinity();
  // A sink takes part in the maximum and the sum, and then has no output of its own.
  const float max_value = loops.max_of(scores, count, sink != nullptr ? *sink : scores[0]);
  const double sum =
      loops.exp_shifted(scores, count, max_value, sink != nullptr ? std::exp(*sink - max_value) : 0.0);
  loops.scale(scores, count, static_cast<float>(1.0 / sum));
}

void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out) {
  const int64_t count = last - first + 1;
  for (int64_t h = 0; h < heads; ++h) {
    const float* qh = q + h * keys.dim;
    const float* bias = terms.bias == nullptr ? nullptr : terms.bias + h * terms.bias_stride;
    for (int64_t p = 0; p < count; ++p) {
      double dot = 0.0;
      for (int64_t d = 0; d < keys.dim; ++d) dot += static_cast<double>(qh[d]) * cached_value(keys, first + p, d);
      scratch[p] = static_cast<float>(dot) * terms.scale;
      if (bias != nullptr) scratch[p] += bias[p];
    }
    normalize_scores(scratch, count, terms.softcap, terms.sinks == nullptr ? nullptr : terms.sinks + h, kSoftmaxLoops,
                     terms.keep);
    for (int64_t d = 0; d < values.dim; ++d) {
      double acc = 0.0;
      for (int64_t p = 0; p < count; ++p) acc += static_cast<double>(scratch[p]) * cached_value(values, first + p, d);
      out[h * values.dim + d] = static_cast<float>(acc);
    }
  }
}

void attention_with(const AttentionArgs& a, HeadsAttend attend) {
  const int64_t group = a.heads / a.kv_heads;
  const int64_t key_dim = a.keys.dim, value_dim = a.values.dim;
  const int64_t q_width = a.heads * key_dim, out_width = a.heads * value_dim;
  // Later queries see more positions, hence dynamic scheduling. A short decode step stays on
  // one thread: a parallel region's barrier would cost more than it saves.
  const int64_t work = a.tokens * a.heads * (a.start + a.tokens) * key_dim;
#pragma omp parallel if (work > kParallelAttentionWork)
  {
    std::vector<float> scores(group * (a.start + a.tokens));
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t t = 0; t < a.tokens; ++t) {
      for (int64_t kv_head = 0; kv_head < a.kv_heads; ++kv_head) {
        const int64_t position = a.start + t;
        int64_t first = a.window > 0 ? std::max<int64_t>(0, position - a.window + 1) : 0;
        if (a.chunk > 0) first = std::max(first, position / a.chunk * a.chunk);
        // The kv head's query heads in one call, which reads its cached keys and values from
        // memory once and then from its cache.
        const int64_t h = kv_head * group;
        // Not causal, the window runs both ways: |position - p| < window.
        int64_t last = a.causal ? position : a.start + a.tokens - 1;
        if (!a.causal && a.window > 0) last = std::min(last, position + a.window - 1);
        ScoreTerms terms;
        terms.scale = a.scale;
        terms.softcap = a.softcap;
        terms.sinks = a.sinks == nullptr ? nullptr : a.sinks + h;
        terms.keep = a.keep == nullptr ? nullptr : a.keep + t * a.keep_stride + first;
        if (a.position_bias != nullptr) {
          terms.bias_stride = 2 * a.bias_span - 1;
          terms.bias = a.position_bias + h * terms.bias_stride + first - position + a.bias_span - 1;
        }
        attend(a.q + t * q_width + h * key_dim, group, a.keys.advanced(kv_head * a.key_stride),
               a.values.advanced(kv_head * a.value_stride), first, last, terms, scores.data(),
               a.out + t * out_width + h * value_dim);
      }
    }
  }
}

void attention(const AttentionArgs& args) { attention_with(args, attend); }

}  // namespace canrun::ref
