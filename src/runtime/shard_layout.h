// Which part of a model one worker of a sharded run holds: contiguous ranges of kv heads
// (with the query heads of their groups), of MLP intermediate columns and of experts, as even
// as possible, the first ranks taking one more when a count does not divide. A rank may own
// none of something (4 ranks over 3 kv heads): it then contributes zeros to that sum.
#pragma once

#include <cstdint>

#include "models/decoder_spec.h"

namespace canrun {

// Where a worker stands in a sharded run; {0, 1} when unsharded.
struct Shard {
  int rank = 0;
  int size = 1;
};

struct IndexRange {
  int64_t first = 0;
  int64_t count = 0;
  int64_t end() const { return first + count; }
  bool contains(int64_t index) const { return index >= first && index < end(); }
};

// Rank `shard.rank`'s share of `total` items split into `shard.size` contiguous ranges.
IndexRange split_evenly(int64_t total, Shard shard);

struct ShardLayout {
  IndexRange kv_heads;
  IndexRange query_heads;  // the query heads of kv_heads' groups
  IndexRange ffn;          // dense MLP intermediate columns
  IndexRange shared_ffn;   // the shared expert's intermediate columns
  IndexRange experts;      // routed experts (expert parallel)
};

ShardLayout shard_layout(const DecoderSpec& spec, Shard shard);

inline constexpr int kMaxCores = 64;

// Throws Error(kUnsupportedOption) naming the config option that cannot be split over
// `cores` workers (a q/k norm over the whole projection width).
void check_shardable(const DecoderSpec& spec, int cores);

}  // namespace canrun
