#include "kernels/cpu/norm.h"

#include <omp.h>

#include "kernels/ref/ops.h"

namespace canrun::cpu {
namespace {

// Below this many values a norm stays on the calling thread: a decode step's one row, or a
// short prompt, costs less than a parallel region's barrier.
constexpr int64_t kParallelValues = 1 << 15;

// Calls norm(first row, row count) for an even run of the rows on each thread.
template <typename Norm>
void over_rows(int64_t rows, int64_t dim, const Norm& norm) {
#pragma omp parallel if (rows > 1 && rows * dim > kParallelValues)
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t first = rows * thread / threads, last = rows * (thread + 1) / threads;
    if (last > first) norm(first, last - first);
  }
}

}  // namespace

void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y) {
  over_rows(rows, dim, [&](int64_t first, int64_t count) {
    ref::rms_norm(x + first * dim, weight, count, dim, eps, y + first * dim);
  });
}

void layer_norm(const float* x, const float* weight, const float* bias, int64_t rows, int64_t dim, float eps,
                float* y) {
  over_rows(rows, dim, [&](int64_t first, int64_t count) {
    ref::layer_norm(x + first * dim, weight, bias, count, dim, eps, y + first * dim);
  });
}

}  // namespace canrun::cpu
