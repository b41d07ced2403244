#include "blocks/rope_table.h"

#include <array>
#include <cmath>
#include <vector>

#include "program/step_context.h"

namespace canrun {
namespace {

// Which of the (t, h, w) positions frequency i takes under M-RoPE.
int mrope_axis(const RopeSpec& rope, int64_t i) {
  const std::vector<int64_t>& section = rope.mrope_section;
  if (!rope.mrope_interleaved) return i < section[0] ? 0 : i < section[0] + section[1] ? 1 : 2;
  if (i % 3 == 1 && i < 3 * section[1]) return 1;
  if (i % 3 == 2 && i < 3 * section[2]) return 2;
  return 0;
}

}  // namespace

void RopeTableStep::run(StepContext& c) const {
  // transformers computes the frequencies once per forward call from its sequence length.
  const std::vector<float> inv_freq = rope_inverse_frequencies(rope_, c.start() + c.count());
  const float scale = static_cast<float>(rope_.attention_factor);
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  const VisualInputs* visual = rope_.mrope_section.empty() ? nullptr : c.state().visual();
  std::vector<int> axis(static_cast<size_t>(half), 0);
  if (visual != nullptr)
    for (int64_t i = 0; i < half; ++i) axis[static_cast<size_t>(i)] = mrope_axis(rope_, i);
  float* table = c.value(outputs()[0]);
  for (int64_t t = 0; t < c.count(); ++t) {
    const int64_t p = c.start() + t;
    // A prompt with images rotates by (t, h, w) positions; without, all three are the position.
    const std::array<int64_t, 3> thw = visual != nullptr ? visual->rope_position(p) : std::array<int64_t, 3>{p, p, p};
    float* row = table + t * 2 * half;
    for (int64_t i = 0; i < half; ++i) {
      // transformers multiplies in f32 and takes cos/sin of the f32 product.
      const float position = static_cast<float>(thw[static_cast<size_t>(axis[static_cast<size_t>(i)])]);
      const float angle = position * inv_freq[i];
      row[i] = std::cos(angle) * scale;
      row[half + i] = std::sin(angle) * scale;
    }
  }
}

}  // namespace canrun
