// The attention block: q/k/v projections, optional q/k norms, rotary positions,
// the static KV cache, causal (optionally sliding-window, soft-capped) attention. Over this
// rank's heads only: `out` is its partial sum of the output projection.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention.h"
#include "kernels/ref/ops.h"
#include "runtime/decoder_model.h"

namespace canrun {
namespace {

constexpr int64_t kParallelAttentionWork = 1 << 16;  // multiply-adds of q·k

}  // namespace

void DecoderModel::attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed,
                                   int64_t count, int64_t start, const RopeTables& rope, KvCache& cache,
                                   float* out) const {
  const int64_t hd = spec_.head_dim;
  const int64_t heads = layout_.query_heads.count, kv_heads = layout_.kv_heads.count;
  if (heads == 0) {  // more ranks than kv heads: this one adds nothing
    std::fill_n(out, count * spec_.hidden_size, 0.0f);
    return;
  }
  const int64_t q_width = heads * hd;
  const int64_t kv_width = kv_heads * hd;
  std::vector<float> q(count * q_width), k(count * kv_width), v(count * kv_width);
  linear(normed, count, layer.q_proj, layer.q_bias, q.data());
  linear(normed, count, layer.k_proj, layer.k_bias, k.data());
  linear(normed, count, layer.v_proj, layer.v_bias, v.data());
  if (spec_.qk_norm_kind == QkNorm::kPerHead) {
    norm(layer.q_norm, spec_.qk_norm_spec, q.data(), count * heads, hd, q.data());
    norm(layer.k_norm, spec_.qk_norm_spec, k.data(), count * kv_heads, hd, k.data());
  } else if (spec_.qk_norm_kind == QkNorm::kWhole) {
    norm(layer.q_norm, spec_.qk_norm_spec, q.data(), count, q_width, q.data());
    norm(layer.k_norm, spec_.qk_norm_spec, k.data(), count, kv_width, k.data());
  }

  const bool rotate = layer_uses_rope(spec_, layer_index);
  const int64_t rotary_dim = rope.inv_freq.size() * 2;
  std::vector<float> cos(rope.inv_freq.size()), sin(rope.inv_freq.size());
  const auto rotary = spec_.rope_interleaved ? ref::apply_rotary_interleaved : ref::apply_rotary;
  for (int64_t t = 0; t < count; ++t) {
    if (rotate) {
      rope.at(start + t, cos.data(), sin.data());
      rotary(q.data() + t * q_width, heads, hd, rotary_dim, cos.data(), sin.data());
      rotary(k.data() + t * kv_width, kv_heads, hd, rotary_dim, cos.data(), sin.data());
    }
    for (int64_t h = 0; h < kv_heads; ++h) {
      std::copy_n(k.data() + t * kv_width + h * hd, hd, cache.keys(layer_index, h) + (start + t) * hd);
      std::copy_n(v.data() + t * kv_width + h * hd, hd, cache.values(layer_index, h) + (start + t) * hd);
    }
  }

  const int64_t group = spec_.num_heads / spec_.num_kv_heads;
  const int64_t window = spec_.sliding_window[static_cast<size_t>(layer_index)];
  const float scale = spec_.attention_scale > 0 ? spec_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const auto attend = backend_ == Backend::kCpu ? cpu::attend : ref::attend;
  std::vector<float> context(count * q_width);
  // Every (query, head) pair is computed alone, so the result does not depend on the threads;
  // later queries see more positions, hence dynamic scheduling. A short decode step stays on
  // one thread: a parallel region's barrier would cost more than it saves.
  const int64_t work = count * heads * (start + count) * hd;
#pragma omp parallel if (work > kParallelAttentionWork)
  {
    std::vector<float> scores(start + count);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t t = 0; t < count; ++t) {
      for (int64_t kv_head = 0; kv_head < kv_heads; ++kv_head) {
        const int64_t position = start + t;
        // A sliding window of W lets a query see itself and the W-1 positions before it.
        const int64_t first = window > 0 ? std::max<int64_t>(0, position - window + 1) : 0;
        // A kv head's query heads run on one thread, which reads the cached keys and values
        // from memory once and then from its cache.
        for (int64_t h = kv_head * group; h < (kv_head + 1) * group; ++h)
          attend(q.data() + t * q_width + h * hd, cache.keys(layer_index, kv_head), hd,
                 cache.values(layer_index, kv_head), hd, first, position, scale, spec_.attn_softcap,
                 layer.sinks.empty() ? nullptr : layer.sinks.data() + h, scores.data(),
                 context.data() + t * q_width + h * hd);
      }
    }
  }
  linear(context.data(), count, layer.o_proj, layer.o_bias, out);
}

}  // namespace canrun
