// Which part of a model one worker of a sharded run holds: contiguous ranges of kv heads
// (with the query heads of their groups), of MLP intermediate columns, of experts, of Mamba-2
// groups and of Gated DeltaNet key heads, as even as possible, the first ranks taking one more
// when a count does not divide. A rank may own none of something (4 ranks over 3 kv heads): it
// then contributes zeros to that sum.
#pragma once

#include <cstdint>
#include <string>

#include "models/decoder_spec.h"
#include "parallel/shard.h"

namespace canrun {

struct ShardLayout {
  IndexRange kv_heads;
  IndexRange query_heads;  // the query heads of kv_heads' groups
  IndexRange ffn;          // dense MLP intermediate columns
  IndexRange shared_ffn;   // the shared expert's intermediate columns
  IndexRange experts;      // routed experts (expert parallel)
  IndexRange channels;     // a convolution mixer's channels (of hidden_size)
  IndexRange mamba_groups;  // Mamba-2 groups, with their heads and B/C states
  IndexRange deltanet_key_heads;  // Gated DeltaNet key heads, with the value heads they serve
};

// Layer `layer`'s: its key/value heads may differ from other layers' (layer_kv_heads).
ShardLayout shard_layout(const DecoderSpec& spec, Shard shard, int64_t layer);

// What keeps the model on one worker (a q/k norm over the whole projection width), or "" when
// it can be split.
std::string unshardable_reason(const DecoderSpec& spec);

// Throws Error(kUnsupportedOption) with unshardable_reason when `cores` is more than 1.
void check_shardable(const DecoderSpec& spec, int cores);

}  // namespace canrun
