// One kernel table per backend: every op a model program runs is looked up here. `ref`
// implements all of them (kernels/ref); `cpu` starts from ref's table and overrides the ops it
// has fast versions of (kernels/cpu/cpu_kernels.cpp); a later backend fills its own table.
// Matrices are [out, in] as nn.Linear stores them; activations are row-major f32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/activation.h"
#include "kernels/backend.h"
#include "kernels/kernel_choices.h"
#include "tensor/dtype.h"
#include "tensor/weight_matrix.h"

namespace canrun {

// A KV cache's keys or values for one kv head: a row of `dim` values per position, stored as
// `dtype` (f32, or bf16 / f16, widened exactly as read).
struct CachedRows {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t dim = 0;
  const void* row(int64_t position) const {
    return static_cast<const std::byte*>(data) + position * dim * static_cast<int64_t>(dtype_size(dtype));
  }
  // The rows `elements` values on (another kv head's).
  CachedRows advanced(int64_t elements) const {
    return {static_cast<const std::byte*>(data) + elements * static_cast<int64_t>(dtype_size(dtype)), dtype, dim};
  }
};

// What shapes a query head's scores before its softmax, in this order: times `scale`, plus
// `bias` (null: none; head h's row at bias + h * bias_stride, one value per attended position
// from the first), capped by `softcap` (0: none), `keep` (null: all) zeroing the probability of
// each position p with keep[p] == 0 (a sparse attention's unselected keys; it keeps at least
// one), `sinks` (null: none) one more logit per head whose probability is then dropped
// (gpt-oss's attention sinks).
struct ScoreTerms {
  float scale = 1;
  const float* bias = nullptr;
  int64_t bias_stride = 0;
  float softcap = 0;
  const uint8_t* keep = nullptr;
  const float* sinks = nullptr;
};

// Causal attention of `tokens` queries at positions start .. start + tokens - 1 over a static
// cache (or, not causal, each query over every position up to the last query's): query head h reads kv head h / (heads / kv_heads), whose cached rows (one per position)
// are keys and values advanced by kv_head * key_stride and kv_head * value_stride values.
struct AttentionArgs {
  const float* q = nullptr;  // [tokens, heads * keys.dim]
  float* out = nullptr;      // [tokens, heads * values.dim]
  int64_t tokens = 0, start = 0;
  int64_t heads = 0, kv_heads = 0;
  CachedRows keys, values;  // kv head 0's
  int64_t key_stride = 0, value_stride = 0;
  bool causal = true;
  // A query sees itself and the window - 1 positions before it (and, not causal, after it); 0: all.
  int64_t window = 0;
  int64_t chunk = 0;   // and only the positions of its own chunk of this many (llama4); 0: no chunks
  float scale = 1;
  float softcap = 0;              // 0: none; else scores = cap * tanh(scores / cap)
  const float* sinks = nullptr;   // [heads]: one more logit per head in each softmax (gpt-oss); null: none
  // Sparse attention (deepseek_v32's indexer): token t attends only to the positions p with
  // keep[t * keep_stride + p] != 0, within its causal window; null: all of them.
  const uint8_t* keep = nullptr;
  int64_t keep_stride = 0;
  // A bias by relative position (MPNet's buckets): query head h's score of position p adds
  // position_bias[h * (2 * bias_span - 1) + p - query + bias_span - 1]; null: none.
  const float* position_bias = nullptr;
  int64_t bias_span = 0;
};

struct KernelTable {
  Backend backend = Backend::kRef;
  // out[i] = row ids[i] of `table` ([vocab, width]) widened to f32.
  void (*embed)(const WeightMatrix& table, const int32_t* ids, int64_t count, float* out);
  // y[rows, w.rows()] = x[rows, w.cols()] @ w^T (+ bias when not null), run as `choices` say.
  void (*linear)(const float* x, int64_t rows, const WeightMatrix& w, const float* bias,
                 const KernelChoices& choices, float* y);
  // y[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * weight, for `rows` rows of `dim`.
  void (*rms_norm)(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* y);
  // y[r] = (x[r] - mean) * rsqrt(var + eps) * weight (+ bias when not null): torch's LayerNorm.
  void (*layer_norm)(const float* x, const float* weight, const float* bias, int64_t rows, int64_t dim, float eps,
                     float* y);
  // Rotates the first rotary_dim dims of each of `heads` vectors of `head_dim` at one position:
  // halves (transformers' rotate_half) or interleaved pairs (x0, x1), (x2, x3)...; cos and sin
  // hold rotary_dim / 2 values.
  void (*rotary_halves)(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                        const float* sin);
  void (*rotary_pairs)(float* x, int64_t heads, int64_t head_dim, int64_t rotary_dim, const float* cos,
                       const float* sin);
  // y[i] = act(x[i]); y[i] = act(gate[i]) * up[i].
  void (*activation)(Activation act, const float* x, int64_t n, float* y);
  void (*gated_activation)(Activation act, const float* gate, const float* up, int64_t n, float* y);
  // y[i] = (clamp(up[i], -limit, limit) + 1) * g * sigmoid(alpha * g), g = min(gate[i], limit):
  // gpt-oss's clamped SwiGLU.
  void (*clamped_swiglu)(const float* gate, const float* up, int64_t n, float alpha, float limit, float* y);
  void (*attention)(const AttentionArgs& args);
  // In place: a stable softmax over n values; x[i] = cap * tanh(x[i] / cap); x[i] *= s.
  void (*softmax)(float* x, int64_t n);
  void (*softcap)(float* x, int64_t n, float cap);
  void (*scale)(float* x, int64_t n, float s);
  // x[i] += y[i] * s (exactly x[i] += y[i] when s is 1).
  void (*add_scaled)(float* x, const float* y, int64_t n, float s);
};

const KernelTable& ref_kernels();
const KernelTable& cpu_kernels();
const KernelTable& kernels_for(Backend backend);

}  // namespace canrun
