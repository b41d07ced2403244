// The static graph of one forward pass over a fixed number of tokens, at kernel granularity (a
// norm, a matrix product, rotary + cache write, attention, an activation, a residual add, an
// all-reduce between shards), with the size of every activation, and the buffer plan: each
// activation placed in one arena by its live range, so the peak activation memory of a shape is
// known before running it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/decoder_spec.h"
#include "runtime/decoder_weights.h"
#include "util/json.h"

namespace canrun {

struct GraphValue {
  std::string name;
  int64_t bytes = 0;
  int first = -1, last = -1;  // the op that writes it first and the op that reads it last
};

struct GraphOp {
  std::string name;
  std::string kind;  // embed, norm, linear, rotary_cache_write, attention, act_mul, add, experts, all_reduce
  std::vector<int> inputs, outputs;  // value indices
  int64_t flops = 0;
  int64_t weight_bytes = 0;
};

struct ForwardGraph {
  int64_t tokens = 0;     // rows run at once (a prefill bucket, or 1 for a decode step)
  int64_t positions = 0;  // KV cache positions attended to at most
  std::vector<GraphOp> ops;
  std::vector<GraphValue> values;
  int64_t flops() const;
  int64_t weight_bytes() const;
};

// The graph of `weights` (one shard's, when sharded over `shards` workers) for `tokens` new
// tokens attending to at most `positions` cached ones.
ForwardGraph build_forward_graph(const DecoderSpec& spec, const DecoderWeights& weights, int64_t tokens,
                                 int64_t positions, int64_t shards);

struct BufferPlan {
  std::vector<int64_t> offsets;  // per value, in the arena
  int64_t arena_bytes = 0;       // the peak: what the activations need at once
  int64_t total_bytes = 0;       // what they would need without reuse
};

// Places each value at the lowest offset free for its whole live range, largest first.
BufferPlan plan_buffers(const ForwardGraph& graph);

Json graph_json(const ForwardGraph& graph, const BufferPlan& plan);

}  // namespace canrun
