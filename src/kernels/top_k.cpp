#include "kernels/top_k.h"

#include <algorithm>
#include <numeric>

namespace canrun {

std::vector<int32_t> top_k_indices(std::span<const float> values, int64_t k) {
  if (k == 1 && !values.empty())  // a greedy step: the first maximum, without sorting
    return {static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin())};
  std::vector<int32_t> ids(values.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto count = static_cast<std::ptrdiff_t>(std::min<size_t>(ids.size(), static_cast<size_t>(std::max<int64_t>(k, 0))));
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), [&](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  ids.resize(static_cast<size_t>(count));
  return ids;
}

}  // namespace canrun
