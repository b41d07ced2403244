#include "kernels/cpu/panel_choices.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace canrun::cpu {
namespace {

struct Entry {
  PanelShape shape;
  PanelChoice choice;
};

// Read on every product, written only while compiling: a shared lock keeps readers parallel.
struct Table {
  std::shared_mutex mutex;
  std::vector<Entry> entries;  // sorted by rows, so the first match is the smallest bucket
};

Table& table() {
  static Table instance;
  return instance;
}

}  // namespace

void set_panel_choice(const PanelShape& shape, PanelChoice choice) {
  Table& t = table();
  std::unique_lock lock(t.mutex);
  auto same = std::find_if(t.entries.begin(), t.entries.end(), [&](const Entry& e) { return e.shape == shape; });
  if (same != t.entries.end()) {
    same->choice = choice;
    return;
  }
  const auto position = std::upper_bound(t.entries.begin(), t.entries.end(), shape.rows,
                                         [](int64_t rows, const Entry& e) { return rows < e.shape.rows; });
  t.entries.insert(position, {shape, choice});
}

PanelChoice panel_choice(int64_t rows, int64_t out, int64_t in, DType dtype) {
  Table& t = table();
  std::shared_lock lock(t.mutex);
  for (const Entry& e : t.entries)
    if (e.shape.rows >= rows && e.shape.out == out && e.shape.in == in && e.shape.dtype == dtype) return e.choice;
  return {};
}

void clear_panel_choices() {
  Table& t = table();
  std::unique_lock lock(t.mutex);
  t.entries.clear();
}

}  // namespace canrun::cpu
