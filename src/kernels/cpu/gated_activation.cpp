#include "kernels/cpu/gated_activation.h"

#include <algorithm>

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"

namespace canrun::cpu {
namespace {

// Values per chunk a thread takes: a prompt's MLP has rows x intermediate values (512 x 4864
// for Qwen2.5-0.5B); a decode step's one row stays on one thread.
constexpr int64_t kChunk = 1 << 14;

}  // namespace

void gated_activation(Activation act, const float* gate, const float* up, int64_t n, float* y) {
  if (act != Activation::kSilu) {
    ref::gated_activation(act, gate, up, n, y);
    return;
  }
  const Primitives& p = primitives();
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * kChunk;
    p.gated_silu(gate + first, up + first, std::min(kChunk, n - first), y + first);
  }
}

void activation(Activation act, const float* x, int64_t n, float* y) {
  if (act != Activation::kGelu) {
    ref::activation(act, x, n, y);
    return;
  }
  const Primitives& p = primitives();
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * kChunk;
    p.gelu(x + first, std::min(kChunk, n - first), y + first);
  }
}

}  // namespace canrun::cpu
