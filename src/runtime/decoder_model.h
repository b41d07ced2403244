// A decoder-only transformer on the `ref` backend: the forward pass over a run
// of tokens at consecutive positions, reading and extending a static KV cache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "models/decoder_spec.h"
#include "runtime/decoder_weights.h"
#include "runtime/kv_cache.h"

namespace canrun {

class DecoderModel {
 public:
  DecoderModel(DecoderSpec spec, DecoderWeights weights);

  const DecoderSpec& spec() const { return spec_; }
  KvCache make_cache(int64_t capacity) const;

  // Runs tokens at positions [start, start + tokens.size()) and returns the logits
  // of the last one (vocab_size floats). Throws Error(kRuntime) when the positions
  // exceed the cache or a token id is out of range.
  std::vector<float> forward(std::span<const int32_t> tokens, int64_t start, KvCache& cache) const;

 private:
  void attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed, int64_t count,
                       int64_t start, KvCache& cache, float* out) const;
  void mlp_block(const LayerWeights& layer, const float* normed, int64_t count, float* out) const;
  void rotary_tables(int64_t position, float* cos, float* sin) const;

  DecoderSpec spec_;
  DecoderWeights weights_;
  std::vector<float> inv_freq_;
};

}  // namespace canrun
