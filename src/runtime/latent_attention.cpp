// Multi-head latent attention (deepseek_v2) as transformers' DeepseekV2Attention computes it.
// transformers caches the normalised latent and the rotated shared key part and expands them
// through kv_b_proj at every step; each position's expansion depends on that position alone,
// so the cache here holds the expanded per-head keys and values instead. Over this rank's heads
// only: `out` is its partial sum of the output projection.
#include <algorithm>
#include <cmath>

#include "kernels/ref/ops.h"
#include "runtime/decoder_model.h"

namespace canrun {

void DecoderModel::latent_attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed,
                                          int64_t count, int64_t start, const RopeTables& rope, KvCache& cache,
                                          float* out) const {
  const LatentAttentionSpec& mla = spec_.mla;
  const LatentAttentionWeights& w = layer.latent;
  const int64_t heads = layout_.query_heads.count;
  if (heads == 0) {  // more ranks than heads: this one adds nothing
    std::fill_n(out, count * spec_.hidden_size, 0.0f);
    return;
  }
  const int64_t qk_dim = spec_.head_dim, q_width = heads * qk_dim;
  const int64_t rank = mla.kv_lora_rank, kv_a_width = rank + mla.rope_dim;
  const int64_t expanded = mla.nope_dim + mla.value_dim;  // per head: [k_nope; v]
  const int64_t context_width = heads * mla.value_dim;

  std::vector<float> q(count * q_width);
  if (mla.q_lora_rank > 0) {
    std::vector<float> q_latent(count * mla.q_lora_rank);
    linear(normed, count, w.q_a, w.q_a_bias, q_latent.data());
    norm(w.q_a_norm, mla.latent_norm, q_latent.data(), count, mla.q_lora_rank, q_latent.data());
    linear(q_latent.data(), count, w.q_b, {}, q.data());
  } else {
    linear(normed, count, layer.q_proj, {}, q.data());
  }

  // kv_a_proj_with_mqa: [latent (rank); shared rotary key (rope_dim)] per position.
  std::vector<float> kv_a(count * kv_a_width), latent(count * rank), kv(count * heads * expanded);
  linear(normed, count, w.kv_a, w.kv_a_bias, kv_a.data());
  for (int64_t t = 0; t < count; ++t) std::copy_n(kv_a.data() + t * kv_a_width, rank, latent.data() + t * rank);
  norm(w.kv_a_norm, mla.latent_norm, latent.data(), count, rank, latent.data());
  linear(latent.data(), count, w.kv_b, {}, kv.data());

  // transformers rotates the rope parts as complex numbers (x[2i] + i x[2i+1]) times e^(i angle):
  // interleaved pairs, no permutation.
  std::vector<float> cos(rope.inv_freq.size()), sin(rope.inv_freq.size());
  for (int64_t t = 0; t < count; ++t) {
    rope.at(start + t, cos.data(), sin.data());
    ref::apply_rotary_interleaved(q.data() + t * q_width + mla.nope_dim, heads, qk_dim, mla.rope_dim, cos.data(),
                                  sin.data());
    float* k_rope = kv_a.data() + t * kv_a_width + rank;
    ref::apply_rotary_interleaved(k_rope, 1, mla.rope_dim, mla.rope_dim, cos.data(), sin.data());
    for (int64_t h = 0; h < heads; ++h) {
      const float* head = kv.data() + (t * heads + h) * expanded;
      float* key = cache.keys(layer_index, h) + (start + t) * qk_dim;
      std::copy_n(head, mla.nope_dim, key);
      std::copy_n(k_rope, mla.rope_dim, key + mla.nope_dim);
      std::copy_n(head + mla.nope_dim, mla.value_dim, cache.values(layer_index, h) + (start + t) * mla.value_dim);
    }
  }

  const float scale =
      spec_.attention_scale > 0 ? spec_.attention_scale : 1.0f / std::sqrt(static_cast<float>(qk_dim));
  std::vector<float> scores(start + count), context(count * context_width);
  for (int64_t t = 0; t < count; ++t)
    for (int64_t h = 0; h < heads; ++h)
      ref::attend(q.data() + t * q_width + h * qk_dim, cache.keys(layer_index, h), qk_dim,
                  cache.values(layer_index, h), mla.value_dim, 0, start + t, scale, 0, nullptr, scores.data(),
                  context.data() + t * context_width + h * mla.value_dim);
  linear(context.data(), count, layer.o_proj, layer.o_bias, out);
}

}  // namespace canrun
