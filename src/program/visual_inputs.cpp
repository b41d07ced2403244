#include "program/visual_inputs.h"

#include <algorithm>

namespace canrun {

int64_t VisualInputs::image_row(int64_t position) const {
  const auto it = std::lower_bound(image_positions.begin(), image_positions.end(), position);
  if (it == image_positions.end() || *it != position) return -1;
  return it - image_positions.begin();
}

std::array<int64_t, 3> VisualInputs::rope_position(int64_t position) const {
  if (position < static_cast<int64_t>(rope_positions.size())) return rope_positions[static_cast<size_t>(position)];
  const int64_t p = position + rope_delta;
  return {p, p, p};
}

}  // namespace canrun
