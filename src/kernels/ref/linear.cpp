#include "kernels/ref/ops.h"

#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace canrun::ref {
namespace {

// Dot product in double with eight independent partial sums: near exact, and the adds do not
// wait on each other, so ref stays fast enough to be the yardstick for multi-billion models.
// `weight(i)` is the i-th weight as f32 (bf16 is widened here, as it is read).
template <typename Weight>
double weighted_dot(const float* x, const Weight& weight, int64_t n) {
  constexpr int64_t kLanes = 8;
  double partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t lane = 0; lane < kLanes; ++lane)
      partial[lane] += static_cast<double>(x[i + lane]) * weight(i + lane);
  }
  for (; i < n; ++i) partial[0] += static_cast<double>(x[i]) * weight(i);
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

double dot(const float* x, const float* w, int64_t n) {
  return weighted_dot(x, [w](int64_t i) { return w[i]; }, n);
}

double dot(const float* x, const uint16_t* w, int64_t n) {
  return weighted_dot(x, [w](int64_t i) { return bf16_to_f32(w[i]); }, n);
}

// y[r, o] = dot(x[r], weights of row o) (+ bias[o]): each output computed the same way whatever
// the thread count, so results do not depend on it. `row(o)` points at output o's weights.
template <typename Row>
void products(const float* x, int64_t rows, int64_t in, int64_t out, const float* bias, float* y, const Row& row) {
#pragma omp parallel for collapse(2) schedule(static) if (rows * out * in > (1 << 20))
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      const double acc = dot(x + r * in, row(o), in);
      y[r * out + o] = static_cast<float>(bias != nullptr ? acc + bias[o] : acc);
    }
  }
}

}  // namespace

void linear(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t out, float* y) {
  products(x, rows, in, out, bias, y, [w, in](int64_t o) { return w + o * in; });
}

void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, float* y) {
  const int64_t in = w.cols(), out = w.rows();
  if (w.dtype() == DType::kBF16) {
    products(x, rows, in, out, bias, y, [&w, in](int64_t o) { return w.bf16_data() + o * in; });
    return;
  }
  // FP8 and int8: each weight row is widened once (with its scales), for all input rows; the values are
  // the dequantised matrix's, so the result is the one ref::linear gives on that matrix.
#pragma omp parallel if (rows * out * in > (1 << 20))
  {
    std::vector<float> widened(static_cast<size_t>(in));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < out; ++o) {
      w.copy_row(o, widened.data());
      for (int64_t r = 0; r < rows; ++r) {
        const double acc = dot(x + r * in, widened.data(), in);
        y[r * out + o] = static_cast<float>(bias != nullptr ? acc + bias[o] : acc);
      }
    }
  }
}

}  // namespace canrun::ref
