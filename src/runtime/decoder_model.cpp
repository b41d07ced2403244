#include "runtime/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ref/ops.h"
#include "util/error.h"

namespace canrun {

DecoderModel::DecoderModel(DecoderSpec spec, DecoderWeights weights, Backend backend,
                           std::shared_ptr<Communicator> comm)
    : spec_(std::move(spec)),
      weights_(std::move(weights)),
      backend_(backend),
      comm_(std::move(comm)),
      layout_(shard_layout(spec_, comm_->shard())) {}

KvCache DecoderModel::make_cache(int64_t capacity) const {
  return KvCache(spec_.num_layers, layout_.kv_heads.count, spec_.head_dim, value_head_dim(spec_), capacity);
}

void DecoderModel::sum_over_ranks(std::vector<float>& partial) const {
  comm_->all_reduce_sum(partial.data(), static_cast<int64_t>(partial.size()));
}

bool DecoderModel::recompute_before(int64_t position) const {
  // transformers' Phi3 drops the cache when the sequence first grows past the pretraining
  // length, so every earlier key is rotated again with the long factors.
  return spec_.longrope_recompute && spec_.rotary && spec_.rope.type == "longrope" &&
         position == spec_.rope.original_max_positions;
}

DecoderModel::RopeTables DecoderModel::rope_tables(const RopeSpec& rope, int64_t seq_len) const {
  return {rope_inverse_frequencies(rope, seq_len), static_cast<float>(rope.attention_factor)};
}

void DecoderModel::RopeTables::at(int64_t position, float* cos, float* sin) const {
  // transformers multiplies in f32 and takes cos/sin of the f32 product.
  const float pos = static_cast<float>(position);
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const float angle = pos * inv_freq[i];
    cos[i] = std::cos(angle) * scale;
    sin[i] = std::sin(angle) * scale;
  }
}

void DecoderModel::linear(const float* x, int64_t rows, const WeightMatrix& w, const FloatBuffer& bias,
                          float* y) const {
  canrun::linear(backend_, x, rows, w, bias.empty() ? nullptr : bias.data(), y);
}

void DecoderModel::norm(const NormWeights& weights, const NormSpec& kind, const float* x, int64_t rows, int64_t dim,
                        float* y) const {
  if (kind.kind == NormKind::kRms)
    ref::rms_norm(x, weights.weight.data(), rows, dim, kind.eps, y);
  else
    ref::layer_norm(x, weights.weight.data(), weights.bias.empty() ? nullptr : weights.bias.data(), rows, dim,
                    kind.eps, y);
}

std::vector<float> DecoderModel::forward(std::span<const int32_t> tokens, int64_t start, KvCache& cache) const {
  const int64_t count = static_cast<int64_t>(tokens.size());
  const int64_t hidden = spec_.hidden_size;
  if (count == 0) fail(ErrorKind::kRuntime, "forward: no tokens to run");
  if (start < 0 || start + count > cache.capacity())
    fail(ErrorKind::kRuntime, "positions " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
                                  " do not fit the KV cache of " + std::to_string(cache.capacity()) + " tokens");
  if (!weights_.embed_positions.empty() && start + count > spec_.max_positions)
    fail(ErrorKind::kRuntime, "position " + std::to_string(start + count - 1) + " is past the " +
                                  std::to_string(spec_.max_positions) + " learned positions");
  std::vector<float> x(count * hidden);
  for (int64_t t = 0; t < count; ++t) {
    const int32_t id = tokens[t];
    if (id < 0 || id >= spec_.vocab_size)
      fail(ErrorKind::kRuntime, "token id " + std::to_string(id) + " is outside the vocabulary of " +
                                    std::to_string(spec_.vocab_size));
    float* row = x.data() + t * hidden;
    weights_.embed_tokens.copy_row(id, row);
    if (spec_.embedding_scale != 1.0f)
      for (int64_t j = 0; j < hidden; ++j) row[j] *= spec_.embedding_scale;
    if (!weights_.embed_positions.empty()) {
      const float* pos = weights_.embed_positions.data() + (start + t + spec_.position_offset) * hidden;
      for (int64_t j = 0; j < hidden; ++j) row[j] += pos[j];
    }
  }

  // transformers computes the rotary tables once per forward call from its sequence length.
  const int64_t seq_len = start + count;
  const RopeTables global_rope = rope_tables(spec_.rope, seq_len);
  const RopeTables local_rope = spec_.use_local_rope ? rope_tables(spec_.local_rope, seq_len) : RopeTables{};

  std::vector<float> normed(count * hidden), attn_out(count * hidden), mlp_out(count * hidden);
  const float r = spec_.residual_scale;
  for (int64_t i = 0; i < spec_.num_layers; ++i) {
    const LayerWeights& layer = weights_.layers[static_cast<size_t>(i)];
    const bool local = spec_.use_local_rope && spec_.sliding_window[static_cast<size_t>(i)] > 0;
    const float* attn_in = x.data();
    if (layer.attn_norm.present()) {
      norm(layer.attn_norm, spec_.norm, x.data(), count, hidden, normed.data());
      attn_in = normed.data();
    }
    const RopeTables& rope = local ? local_rope : global_rope;
    if (spec_.latent_attention)
      latent_attention_block(layer, i, attn_in, count, start, rope, cache, attn_out.data());
    else
      attention_block(layer, i, attn_in, count, start, rope, cache, attn_out.data());
    // A parallel residual sums attention and MLP partials first and reduces once.
    const bool reduce_once = spec_.residual == Residual::kParallel && !layer.post_attn_norm.present();
    if (!reduce_once) sum_over_ranks(attn_out);
    if (layer.post_attn_norm.present())
      norm(layer.post_attn_norm, spec_.norm, attn_out.data(), count, hidden, attn_out.data());

    if (spec_.residual == Residual::kParallel) {
      // x + attn(n1(x)) + mlp(n2(x)), n2 = n1 when the family has one norm per layer.
      const float* mlp_in = attn_in;
      std::vector<float> mlp_normed;
      if (layer.mlp_norm.present()) {
        mlp_normed.resize(x.size());
        norm(layer.mlp_norm, spec_.norm, x.data(), count, hidden, mlp_normed.data());
        mlp_in = mlp_normed.data();
      }
      mlp_block(layer, i, mlp_in, count, mlp_out.data());
      if (reduce_once) {
        for (size_t j = 0; j < x.size(); ++j) mlp_out[j] += attn_out[j];
        sum_over_ranks(mlp_out);
        for (size_t j = 0; j < x.size(); ++j) x[j] += mlp_out[j];
      } else {
        sum_over_ranks(mlp_out);
        for (size_t j = 0; j < x.size(); ++j) x[j] = (mlp_out[j] + attn_out[j]) + x[j];
      }
      continue;
    }

    for (size_t j = 0; j < x.size(); ++j) x[j] += r == 1.0f ? attn_out[j] : attn_out[j] * r;
    const float* mlp_in = x.data();
    if (layer.mlp_norm.present()) {
      norm(layer.mlp_norm, spec_.norm, x.data(), count, hidden, normed.data());
      mlp_in = normed.data();
    }
    mlp_block(layer, i, mlp_in, count, mlp_out.data());
    sum_over_ranks(mlp_out);
    if (layer.post_mlp_norm.present())
      norm(layer.post_mlp_norm, spec_.norm, mlp_out.data(), count, hidden, mlp_out.data());
    for (size_t j = 0; j < x.size(); ++j) x[j] += r == 1.0f ? mlp_out[j] : mlp_out[j] * r;
  }

  // Only the last position's logits are needed for greedy generation.
  const float* last = x.data() + (count - 1) * hidden;
  std::vector<float> final_normed(hidden), logits(spec_.vocab_size);
  if (weights_.final_norm.present()) {
    norm(weights_.final_norm, spec_.norm, last, 1, hidden, final_normed.data());
  } else {
    std::copy_n(last, hidden, final_normed.data());
  }
  linear(final_normed.data(), 1, weights_.lm_head, weights_.lm_head_bias, logits.data());
  if (spec_.logits_scale != 1.0f)
    for (float& l : logits) l *= spec_.logits_scale;
  if (spec_.final_softcap > 0) ref::softcap(logits.data(), spec_.vocab_size, spec_.final_softcap);
  return logits;
}

}  // namespace canrun
