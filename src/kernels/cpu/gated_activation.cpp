#include "kernels/cpu/gated_activation.h"

#include <algorithm>

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"

namespace canrun::cpu {
namespace {

// Values per chunk a thread takes: a prompt's MLP has rows x intermediate values (512 x 4864
// for Qwen2.5-0.5B); a decode step's one row stays on one thread.
constexpr int64_t kChunk = 1 << 14;

// Calls run(first value, count) for each chunk of n values, the chunks spread over the threads.
template <typename Run>
void over_chunks(int64_t n, const Run& run) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) run(c * kChunk, std::min(kChunk, n - c * kChunk));
}

}  // namespace

void gated_activation(Activation act, const float* gate, const float* up, int64_t n, float* y) {
  if (act != Activation::kSilu) {
    ref::gated_activation(act, gate, up, n, y);
    return;
  }
  const Primitives& p = primitives();
  over_chunks(n, [&](int64_t first, int64_t count) { p.gated_silu(gate + first, up + first, count, y + first); });
}

void activation(Activation act, const float* x, int64_t n, float* y) {
  if (act != Activation::kGelu) {
    ref::activation(act, x, n, y);
    return;
  }
  const Primitives& p = primitives();
  over_chunks(n, [&](int64_t first, int64_t count) { p.gelu(x + first, count, y + first); });
}

}  // namespace canrun::cpu
