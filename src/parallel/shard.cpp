#include "parallel/shard.h"

#include <algorithm>

namespace canrun {

IndexRange split_evenly(int64_t total, Shard shard) {
  const int64_t base = total / shard.size, extra = total % shard.size;
  const int64_t rank = shard.rank;
  return {rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

}  // namespace canrun
