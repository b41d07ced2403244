// A decoder-only transformer: the forward pass over a run of tokens at consecutive
// positions, reading and extending a static KV cache. Matrix products run on the backend
// chosen at load (linear()); attention, norms and rotary use the ref kernels.
// The blocks are split by file: attention (decoder_attention.cpp), multi-head latent
// attention (latent_attention.cpp), dense and routed-experts MLPs (decoder_mlp.cpp), and the
// layer loop (decoder_model.cpp).
// Sharded (tensor and expert parallel), each rank holds and computes its part of every
// attention and MLP block (shard_layout.h) and the partial outputs are summed over the ranks
// after each block's output projection; norms, residuals, embeddings and logits are replicated.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "models/decoder_spec.h"
#include "runtime/backend.h"
#include "runtime/communicator.h"
#include "runtime/decoder_weights.h"
#include "runtime/kv_cache.h"
#include "runtime/shard_layout.h"

namespace canrun {

class DecoderModel {
 public:
  // `weights` hold `comm`'s rank's part (DecoderWeights::load with comm->shard()).
  DecoderModel(DecoderSpec spec, DecoderWeights weights, Backend backend,
               std::shared_ptr<Communicator> comm = single_process_communicator());

  const DecoderSpec& spec() const { return spec_; }
  const DecoderWeights& weights() const { return weights_; }
  // The compile step swaps the linear matrices for packed ones before the first forward.
  DecoderWeights& mutable_weights() { return weights_; }
  Backend backend() const { return backend_; }
  Shard shard() const { return comm_->shard(); }
  Communicator& communicator() const { return *comm_; }
  // Holds this rank's kv heads only.
  KvCache make_cache(int64_t capacity) const;

  // Runs tokens at positions [start, start + tokens.size()) and returns the logits
  // of the last one (vocab_size floats). Throws Error(kRuntime) when the positions
  // exceed the cache or a token id is out of range.
  std::vector<float> forward(std::span<const int32_t> tokens, int64_t start, KvCache& cache) const;

  // True when running one more token at `position` must recompute the whole sequence, as
  // transformers does when longrope switches from its short to its long factors (phi3).
  bool recompute_before(int64_t position) const;

 private:
  struct RopeTables {
    std::vector<float> inv_freq;
    float scale = 1.0f;  // attention_factor on cos and sin
    // cos and sin (inv_freq.size() each) of the angles at one position.
    void at(int64_t position, float* cos, float* sin) const;
  };
  void attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed, int64_t count,
                       int64_t start, const RopeTables& rope, KvCache& cache, float* out) const;
  void latent_attention_block(const LayerWeights& layer, int64_t layer_index, const float* normed, int64_t count,
                              int64_t start, const RopeTables& rope, KvCache& cache, float* out) const;
  void mlp_block(const LayerWeights& layer, int64_t layer_index, const float* normed, int64_t count,
                 float* out) const;
  void experts_block(const LayerWeights& layer, const float* normed, int64_t count, float* out) const;
  void norm(const NormWeights& weights, const NormSpec& kind, const float* x, int64_t rows, int64_t dim,
            float* y) const;
  RopeTables rope_tables(const RopeSpec& rope, int64_t seq_len) const;
  // y = x @ w^T (+ bias when not empty) for `rows` rows, on this model's backend.
  void linear(const float* x, int64_t rows, const WeightMatrix& w, const FloatBuffer& bias, float* y) const;

  // Sums the ranks' partial block outputs (a no-op unsharded).
  void sum_over_ranks(std::vector<float>& partial) const;

  DecoderSpec spec_;
  DecoderWeights weights_;
  Backend backend_;
  std::shared_ptr<Communicator> comm_;
  ShardLayout layout_;
};

}  // namespace canrun
