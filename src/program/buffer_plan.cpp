#include "program/buffer_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace canrun {
namespace {

constexpr int64_t kAlignment = 64;

}  // namespace

BufferPlan plan_buffers(const Program& program, int64_t tokens, int64_t last_rows) {
  const size_t n = program.values().size();
  std::vector<int> first(n, -1), last(n, -1);
  const auto& steps = program.steps();
  for (size_t s = 0; s < steps.size(); ++s) {
    const int index = static_cast<int>(s);
    for (const auto* ids : {&steps[s]->inputs(), &steps[s]->outputs()})
      for (ValueId id : *ids) {
        if (first[id] < 0) first[id] = index;
        last[id] = index;
      }
  }
  BufferPlan plan;
  plan.tokens = tokens;
  plan.last_rows = last_rows;
  plan.offsets.assign(n, 0);
  plan.bytes.assign(n, 0);
  for (size_t v = 0; v < n; ++v)
    if (first[v] >= 0) {
      const int64_t floats = program.rows(static_cast<ValueId>(v), tokens, last_rows) * program.values()[v].width;
      plan.bytes[v] = (floats * static_cast<int64_t>(sizeof(float)) + kAlignment - 1) / kAlignment * kAlignment;
    }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.bytes[a] > plan.bytes[b]; });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t v : order) {
    if (plan.bytes[v] == 0) continue;
    plan.total_bytes += plan.bytes[v];
    // The ranges of placed values live at the same time, by offset: the first gap that fits wins.
    busy.clear();
    for (size_t other : placed)
      if (first[other] <= last[v] && first[v] <= last[other])
        busy.push_back({plan.offsets[other], plan.offsets[other] + plan.bytes[other]});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + plan.bytes[v] <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[v] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + plan.bytes[v]);
    placed.push_back(v);
  }
  return plan;
}

}  // namespace canrun
