// The cpu backend's activations: the gated one (the MLP's act(gate) * up: SwiGLU with the chosen
// set's vector exp, Primitives::gated_silu) and the plain one (exact GELU with its vector erf,
// Primitives::gelu), threads over chunks of the values; other activations run ref's. Each value
// is computed on its own, so results do not depend on the thread count.
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace canrun::cpu {

void gated_activation(Activation act, const float* gate, const float* up, int64_t n, float* y);
void activation(Activation act, const float* x, int64_t n, float* y);

}  // namespace canrun::cpu
