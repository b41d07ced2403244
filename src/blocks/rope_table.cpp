#include "blocks/rope_table.h"

#include <cmath>
#include <vector>

#include "program/step_context.h"

namespace canrun {

void RopeTableStep::run(StepContext& c) const {
  // transformers computes the frequencies once per forward call from its sequence length.
  const std::vector<float> inv_freq = rope_inverse_frequencies(rope_, c.start() + c.count());
  const float scale = static_cast<float>(rope_.attention_factor);
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  float* table = c.value(outputs()[0]);
  for (int64_t t = 0; t < c.count(); ++t) {
    // transformers multiplies in f32 and takes cos/sin of the f32 product.
    const float position = static_cast<float>(c.start() + t);
    float* row = table + t * 2 * half;
    for (int64_t i = 0; i < half; ++i) {
      const float angle = position * inv_freq[i];
      row[i] = std::cos(angle) * scale;
      row[half + i] = std::sin(angle) * scale;
    }
  }
}

}  // namespace canrun
