// The `ref` backend: plain, obviously-correct f32 kernels. Faster backends are
// checked against these. Matrices are row-major; weights are [out, in] as stored
// by PyTorch's nn.Linear.
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/kernel_table.h"

namespace canrun::ref {

// y[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * weight, for `rows` rows of `dim`.
void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y);

// y[r] = (x[r] - mean) * rsqrt(var + eps) * weight (+ bias when not null): torch's LayerNorm.
void layer_norm(const float* x, const float* weight, const float* bias, int64_t rows, int64_t dim, float eps,
                float* y);

// y[rows, out] = x[rows, in] @ w[out, in]^T (+ bias[out] when not null).
void linear(const float* x, int64_t rows, int64_t in, const float* w, const float* bias, int64_t out, float* y);
// The same for a row-major matrix of any stored dtype (bf16, FP8 with its scales): each row is
// widened to f32 as it is used, so the model is never held in f32.
void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, float* y);

// Rotates the first rotary_dim dims of each of `heads` vectors of `head_dim` at one
// position, half-split layout (transformers' rotate_half): cos/sin hold rotary_dim/2.
void apply_rotary(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                  const float* sin);

// y[i] = act(gate[i]) * up[i] (gated) or act(x[i]) (plain).
void gated_activation(Activation act, const float* gate, const float* up, int64_t n, float* y);
void activation(Activation act, const float* x, int64_t n, float* y);

// x[i] = cap * tanh(x[i] / cap): gemma2's soft-capping of attention scores and logits.
void softcap(float* x, int64_t n, float cap);

// In-place softmax over n values, computed stably.
void softmax(float* x, int64_t n);

// x[i] *= s; x[i] += y[i] * s (exactly x[i] += y[i] when s is 1).
void scale(float* x, int64_t n, float s);
void add_scaled(float* x, const float* y, int64_t n, float s);

// x[i] = exp(x[i] - shift) for i < n; returns `sum` plus their sum, added in order in double.
double exp_shifted(float* x, int64_t n, float shift, double sum);
// The largest of `start` and x[0, n), as `m = x[i] > m ? x[i] : m` in order: NaNs in x are
// passed over, a NaN start stays. (A backend's may give the other zero when the largest is a
// zero: x - max, all a softmax takes from it, is the same.)
float max_of(const float* x, int64_t n, float start);

// A softmax's loops over its scores: ref's (kSoftmaxLoops), or a backend's vector ones with
// the same contracts (the same results, but for the order exp's sum is added in).
struct SoftmaxLoops {
  void (*scale)(float* x, int64_t n, float factor);
  float (*max_of)(const float* x, int64_t n, float start);
  double (*exp_shifted)(float* x, int64_t n, float shift, double sum);
};
inline constexpr SoftmaxLoops kSoftmaxLoops{scale, max_of, exp_shifted};

// Attention scores[count] to probabilities in place: `cap` (0: none) caps each score first;
// `sink` (null: none) is one more logit in the softmax whose probability is then dropped
// (gpt-oss's attention sinks). `loops` run the maximum, the exponentials and the scaling by
// their sum's inverse. `keep` (null: all) zeroes the probability of each position p with
// keep[p] == 0 (a sparse attention's unselected keys); it keeps at least one.
void normalize_scores(float* scores, int64_t count, float cap, const float* sink,
                      const SoftmaxLoops& loops = kSoftmaxLoops, const uint8_t* keep = nullptr);

// The attention of a kv head's query heads, the contract of ref::attend below (the cpu backend
// has its own).
using HeadsAttend = void (*)(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values,
                             int64_t first, int64_t last, const ScoreTerms& terms, float* scratch, float* out);
// Every (query, kv head) of `args` through `attend`, with the kv head's query heads: each
// computed alone, so results do not depend on the thread count.
void attention_with(const AttentionArgs& args, HeadsAttend attend);
void attention(const AttentionArgs& args);

// `heads` query heads of keys.dim each (q, one after another) against the same cached keys
// and values; attends to positions [first, last] inclusive; writes values.dim outputs per head
// (out, one after another). `terms` shape the scores (keep and bias from `first` on, sinks per
// head). `scratch` holds heads * (last - first + 1) floats.
void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out);

// y[i] = (clamp(up[i], -limit, limit) + 1) * g * sigmoid(alpha * g), g = min(gate[i], limit):
// gpt-oss's clamped SwiGLU.
void clamped_swiglu(const float* gate, const float* up, int64_t n, float alpha, float limit, float* y);

// Rotates pairs (x[2i], x[2i+1]) of the first rotary_dim dims (cohere's interleaved layout).
void apply_rotary_interleaved(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                              const float* sin);

}  // namespace canrun::ref
