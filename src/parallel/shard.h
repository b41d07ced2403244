// Where a worker stands in a sharded run, and the contiguous share of a count it holds.
#pragma once

#include <cstdint>

namespace canrun {

// {0, 1} when unsharded.
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

// Rank `shard.rank`'s share of `total` items split into `shard.size` contiguous ranges, as even
// as possible, the first ranks taking one more when the count does not divide.
IndexRange split_evenly(int64_t total, Shard shard);

inline constexpr int kMaxCores = 64;

}  // namespace canrun
