// The `ref` backend: plain, obviously-correct f32 kernels. Faster backends are
// checked against these. Matrices are row-major; weights are [out, in] as stored
// by PyTorch's nn.Linear.
#pragma once

#include <cstdint>

namespace canrun::ref {

// y[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * weight, for `rows` rows of `dim`.
void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y);

// y[rows, out] = x[rows, in] @ w[out, in]^T (+ bias[out] when not null).
void linear(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t out, float* y);

// Rotates the first rotary_dim dims of each of `heads` vectors of `head_dim` at one
// position, half-split layout (transformers' rotate_half): cos/sin hold rotary_dim/2.
void apply_rotary(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                  const float* sin);

// x[i] = silu(gate[i]) * up[i]
void silu_mul(const float* gate, const float* up, int64_t n, float* y);

// In-place softmax over n values, computed stably.
void softmax(float* x, int64_t n);

// One query head against keys/values [positions, head_dim] (rows `stride` apart);
// attends to positions [first, last] inclusive; writes head_dim outputs.
void attend(const float* q, const float* keys, const float* values, int64_t stride, int64_t first,
            int64_t last, int64_t head_dim, float scale, float* scratch, float* out);

}  // namespace canrun::ref
