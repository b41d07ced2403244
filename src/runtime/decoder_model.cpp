#include "runtime/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ref/ops.h"
#include "util/error.h"

namespace canrun {

DecoderModel::DecoderModel(DecoderSpec spec, DecoderWeights weights)
    : spec_(std::move(spec)), weights_(std::move(weights)), inv_freq_(rope_inverse_frequencies(spec_.rope)) {}

KvCache DecoderModel::make_cache(int64_t capacity) const {
  return KvCache(spec_.num_layers, spec_.num_kv_heads, spec_.head_dim, capacity);
}

void DecoderModel::rotary_tables(int64_t position, float* cos, float* sin) const {
  // transformers multiplies in f32 and takes cos/sin of the f32 product.
  const float pos = static_cast<float>(position);
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const float angle = pos * inv_freq_[i];
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
  }
}

void DecoderModel::attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed,
                                   int64_t count, int64_t start, KvCache& cache, float* out) const {
  const int64_t hd = spec_.head_dim;
  const int64_t q_width = spec_.num_heads * hd;
  const int64_t kv_width = spec_.num_kv_heads * hd;
  std::vector<float> q(count * q_width), k(count * kv_width), v(count * kv_width);
  ref::linear(normed, count, spec_.hidden_size, layer.q_proj.data(), layer.q_bias.data(), q_width, q.data());
  ref::linear(normed, count, spec_.hidden_size, layer.k_proj.data(), layer.k_bias.data(), kv_width, k.data());
  ref::linear(normed, count, spec_.hidden_size, layer.v_proj.data(), layer.v_bias.data(), kv_width, v.data());
  if (spec_.qk_norm) {
    ref::rms_norm(q.data(), layer.q_norm.data(), count * spec_.num_heads, hd, spec_.norm_eps, q.data());
    ref::rms_norm(k.data(), layer.k_norm.data(), count * spec_.num_kv_heads, hd, spec_.norm_eps, k.data());
  }

  std::vector<float> cos(inv_freq_.size()), sin(inv_freq_.size());
  for (int64_t t = 0; t < count; ++t) {
    rotary_tables(start + t, cos.data(), sin.data());
    ref::apply_rotary(q.data() + t * q_width, spec_.num_heads, hd, spec_.rope.rotary_dim, cos.data(), sin.data());
    ref::apply_rotary(k.data() + t * kv_width, spec_.num_kv_heads, hd, spec_.rope.rotary_dim, cos.data(),
                      sin.data());
    for (int64_t h = 0; h < spec_.num_kv_heads; ++h) {
      std::copy_n(k.data() + t * kv_width + h * hd, hd, cache.keys(layer_index, h) + (start + t) * hd);
      std::copy_n(v.data() + t * kv_width + h * hd, hd, cache.values(layer_index, h) + (start + t) * hd);
    }
  }

  const int64_t group = spec_.num_heads / spec_.num_kv_heads;
  const int64_t window = spec_.sliding_window[static_cast<size_t>(layer_index)];
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> scores(start + count), context(count * q_width);
  for (int64_t t = 0; t < count; ++t) {
    const int64_t position = start + t;
    // A sliding window of W lets a query see itself and the W-1 positions before it.
    const int64_t first = window > 0 ? std::max<int64_t>(0, position - window + 1) : 0;
    for (int64_t h = 0; h < spec_.num_heads; ++h) {
      const int64_t kv_head = h / group;
      ref::attend(q.data() + t * q_width + h * hd, cache.keys(layer_index, kv_head),
                  cache.values(layer_index, kv_head), hd, first, position, hd, scale, scores.data(),
                  context.data() + t * q_width + h * hd);
    }
  }
  ref::linear(context.data(), count, q_width, layer.o_proj.data(), layer.o_bias.data(), spec_.hidden_size, out);
}

void DecoderModel::mlp_block(const LayerWeights& layer, const float* normed, int64_t count, float* out) const {
  const int64_t ffn = spec_.intermediate_size;
  std::vector<float> gate(count * ffn), up(count * ffn);
  ref::linear(normed, count, spec_.hidden_size, layer.gate_proj.data(), layer.gate_bias.data(), ffn, gate.data());
  ref::linear(normed, count, spec_.hidden_size, layer.up_proj.data(), layer.up_bias.data(), ffn, up.data());
  ref::silu_mul(gate.data(), up.data(), count * ffn, gate.data());
  ref::linear(gate.data(), count, ffn, layer.down_proj.data(), layer.down_bias.data(), spec_.hidden_size, out);
}

std::vector<float> DecoderModel::forward(std::span<const int32_t> tokens, int64_t start, KvCache& cache) const {
  const int64_t count = static_cast<int64_t>(tokens.size());
  const int64_t hidden = spec_.hidden_size;
  if (count == 0) fail(ErrorKind::kRuntime, "forward: no tokens to run");
  if (start < 0 || start + count > cache.capacity())
    fail(ErrorKind::kRuntime, "positions " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
                                  " do not fit the KV cache of " + std::to_string(cache.capacity()) + " tokens");
  std::vector<float> x(count * hidden);
  for (int64_t t = 0; t < count; ++t) {
    const int32_t id = tokens[t];
    if (id < 0 || id >= spec_.vocab_size)
      fail(ErrorKind::kRuntime, "token id " + std::to_string(id) + " is outside the vocabulary of " +
                                    std::to_string(spec_.vocab_size));
    std::copy_n(weights_.embed_tokens.data() + static_cast<int64_t>(id) * hidden, hidden, x.data() + t * hidden);
  }

  std::vector<float> normed(count * hidden), block_out(count * hidden);
  for (int64_t i = 0; i < spec_.num_layers; ++i) {
    const LayerWeights& layer = weights_.layers[static_cast<size_t>(i)];
    ref::rms_norm(x.data(), layer.attn_norm.data(), count, hidden, spec_.norm_eps, normed.data());
    attention_block(layer, i, normed.data(), count, start, cache, block_out.data());
    for (size_t j = 0; j < x.size(); ++j) x[j] += block_out[j];
    ref::rms_norm(x.data(), layer.mlp_norm.data(), count, hidden, spec_.norm_eps, normed.data());
    mlp_block(layer, normed.data(), count, block_out.data());
    for (size_t j = 0; j < x.size(); ++j) x[j] += block_out[j];
  }

  // Only the last position's logits are needed for greedy generation.
  const float* last = x.data() + (count - 1) * hidden;
  std::vector<float> final_normed(hidden), logits(spec_.vocab_size);
  ref::rms_norm(last, weights_.final_norm.data(), 1, hidden, spec_.norm_eps, final_normed.data());
  ref::linear(final_normed.data(), 1, hidden, weights_.output_projection(), nullptr, spec_.vocab_size,
              logits.data());
  return logits;
}

}  // namespace canrun
