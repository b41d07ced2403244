#include <cmath>
#include <numbers>

#include "kernels/ref/ops.h"

namespace canrun::ref {
namespace {

float apply(Activation act, float x) {
  switch (act) {
    case Activation::kSilu:
      return x / (1.0f + std::exp(-x));
    case Activation::kGeluTanh: {
      const double v = x;
      const double inner = std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v);
      return static_cast<float>(0.5 * v * (1.0 + std::tanh(inner)));
    }
    case Activation::kGelu:
      return static_cast<float>(0.5 * x * (1.0 + std::erf(static_cast<double>(x) / std::numbers::sqrt2)));
    case Activation::kRelu:
      return x > 0 ? x : 0.0f;
    case Activation::kRelu2:
      return x > 0 ? x * x : 0.0f;
    case Activation::kQuickGelu:
      return x * (1.0f / (1.0f + std::exp(-1.702f * x)));
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case Activation::kXielu:
      break;  // needs its layer's scalars: dense_mlp's XieluStep
  }
  return x;
}

}  // namespace

void gated_activation(Activation act, const float* gate, const float* up, int64_t n, float* y) {
  if (act == Activation::kSilu) {
    for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = apply(act, gate[i]) * up[i];
}

void activation(Activation act, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = apply(act, x[i]);
}

void clamped_swiglu(const float* gate, const float* up, int64_t n, float alpha, float limit, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i] < limit ? gate[i] : limit;
    const float u = up[i] < -limit ? -limit : (up[i] > limit ? limit : up[i]);
    const float glu = g * (1.0f / (1.0f + std::exp(-(g * alpha))));
    y[i] = (u + 1.0f) * glu;
  }
}

double exp_shifted(float* x, int64_t n, float shift, double sum) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

float max_of(const float* x, int64_t n, float start) {
  float m = start;
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

void softmax(float* x, int64_t n) { normalize_scores(x, n, 0, nullptr); }

}  // namespace canrun::ref
