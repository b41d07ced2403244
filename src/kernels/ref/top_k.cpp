#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/ref/ops.h"

namespace canrun::ref {

void top_k(const float* x, int64_t n, int64_t k, int64_t* indices) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] > x[b]; });
  std::copy_n(order.begin(), k, indices);
}

}  // namespace canrun::ref
