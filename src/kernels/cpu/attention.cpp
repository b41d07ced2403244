#include "kernels/cpu/attention.h"

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"

namespace canrun::cpu {

void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out) {
  const Primitives& p = primitives();
  const int64_t count = last - first + 1;
  p.dot_rows(q, heads, keys.row(first), keys.dtype, count, keys.dim, scratch);
  for (int64_t h = 0; h < heads; ++h) {
    float* scores = scratch + h * count;
    p.softmax_loops.scale(scores, count, terms.scale);
    if (terms.bias != nullptr) {
      const float* bias = terms.bias + h * terms.bias_stride;
      for (int64_t i = 0; i < count; ++i) scores[i] += bias[i];
    }
    ref::normalize_scores(scores, count, terms.softcap, terms.sinks == nullptr ? nullptr : terms.sinks + h,
                          p.softmax_loops, terms.keep);
  }
  p.weighted_sum(scratch, heads, values.row(first), values.dtype, count, values.dim, out);
}

}  // namespace canrun::cpu
