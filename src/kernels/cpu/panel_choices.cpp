#include "kernels/cpu/panel_choices.h"

#include <algorithm>

namespace canrun::cpu {

void PanelChoices::set(const PanelShape& shape, PanelChoice choice) {
  auto same = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.shape == shape; });
  if (same != entries_.end()) {
    same->choice = choice;
    return;
  }
  const auto position = std::upper_bound(entries_.begin(), entries_.end(), shape.rows,
                                         [](int64_t rows, const Entry& e) { return rows < e.shape.rows; });
  entries_.insert(position, {shape, choice});
}

PanelChoice PanelChoices::find(int64_t rows, int64_t out, int64_t in, DType dtype) const {
  for (const Entry& e : entries_)
    if (e.shape.rows >= rows && e.shape.out == out && e.shape.in == in && e.shape.dtype == dtype) return e.choice;
  return {};
}

}  // namespace canrun::cpu
