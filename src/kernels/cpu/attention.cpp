#include "kernels/cpu/attention.h"

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"

namespace canrun::cpu {

void attend(const float* q, const float* keys, int64_t key_dim, const float* values, int64_t value_dim,
            int64_t first, int64_t last, float scale, float softcap, const float* sink, float* scratch, float* out) {
  const Primitives& p = primitives();
  const int64_t count = last - first + 1;
  p.dot_rows_f32(q, keys + first * key_dim, count, key_dim, scratch);
  for (int64_t i = 0; i < count; ++i) scratch[i] *= scale;
  ref::normalize_scores(scratch, count, softcap, sink, p.exp_shifted);
  p.weighted_sum_f32(scratch, values + first * value_dim, count, value_dim, out);
}

}  // namespace canrun::cpu
