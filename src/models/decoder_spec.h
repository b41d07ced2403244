// Everything the shared decoder-only transformer needs to know about one model:
// sizes, and each family quirk as a parameter rather than a code path of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/rope.h"

namespace canrun {

enum class Activation { kSilu };

struct DecoderSpec {
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_positions = 0;
  float norm_eps = 1e-6f;
  RopeSpec rope;
  Activation activation = Activation::kSilu;
  bool tie_embeddings = false;
  bool qkv_bias = false;   // biases on the q, k and v projections
  bool o_bias = false;     // bias on the attention output projection
  bool mlp_bias = false;   // biases on gate, up and down projections
  bool qk_norm = false;    // RMSNorm over each head of q and k before rotary
  std::vector<int64_t> sliding_window;  // per layer; 0 means full causal attention
};

}  // namespace canrun
