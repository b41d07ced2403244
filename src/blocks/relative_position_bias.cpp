#include "blocks/relative_position_bias.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace canrun {

int64_t relative_position_bucket(int64_t relative_position, int64_t buckets, int64_t max_distance) {
  const int64_t half = buckets / 2, max_exact = half / 2;
  const int64_t distance = std::abs(relative_position);
  // n = -relative_position: a key after the query (n < 0) takes the upper half.
  const int64_t base = relative_position > 0 ? half : 0;
  if (distance < max_exact) return base + distance;
  // float32 throughout, as torch computes it, so the truncation falls where transformers' does.
  const float log_ratio = std::log(static_cast<float>(distance) / static_cast<float>(max_exact));
  const float scaled = log_ratio / static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact)) *
                       static_cast<float>(half - max_exact);
  return base + std::min(max_exact + static_cast<int64_t>(scaled), half - 1);
}

FloatBuffer relative_position_bias(const FloatBuffer& weights, const DecoderSpec& spec, IndexRange heads) {
  if (weights.empty()) return FloatBuffer();  // a program listed for its tensors only, no values read
  const int64_t span = spec.max_positions, width = 2 * span - 1;
  std::vector<int64_t> bucket(static_cast<size_t>(width));
  for (int64_t d = -(span - 1); d < span; ++d)
    bucket[static_cast<size_t>(d + span - 1)] =
        relative_position_bucket(d, spec.relative_buckets, spec.relative_max_distance);
  std::vector<float> table(static_cast<size_t>(heads.count * width));
  for (int64_t h = 0; h < heads.count; ++h)
    for (int64_t i = 0; i < width; ++i)
      table[static_cast<size_t>(h * width + i)] = weights.data()[bucket[static_cast<size_t>(i)] * spec.num_heads + heads.first + h];
  return FloatBuffer::owning(std::move(table));
}

}  // namespace canrun
