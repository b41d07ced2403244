#include "kernels/cpu/attention.h"

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"

namespace canrun::cpu {

void attend(const float* q, const CachedRows& keys, const CachedRows& values, int64_t first, int64_t last,
            float scale, float softcap, const float* sink, const uint8_t* keep, float* scratch, float* out) {
  const Primitives& p = primitives();
  const int64_t count = last - first + 1;
  p.dot_rows(q, keys.row(first), keys.dtype, count, keys.dim, scratch);
  for (int64_t i = 0; i < count; ++i) scratch[i] *= scale;
  ref::normalize_scores(scratch, count, softcap, sink, p.exp_shifted, keep);
  p.weighted_sum(scratch, values.row(first), values.dtype, count, values.dim, out);
}

}  // namespace canrun::cpu
