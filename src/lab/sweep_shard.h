// One of N disjoint, stable slices of a sweep's models (`canrun sweep --shard K/N`), for a Slurm
// job array, a Kubernetes indexed Job or GNU parallel over hosts: a model's slice follows from
// its id alone, so every shard agrees without talking to the others, and a catalog that gains or
// loses models moves no other model between slices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace canrun {

struct SweepShard {
  int64_t index = 1;  // K, from 1
  int64_t count = 1;  // N
  // "part-K-of-N": the name of the shard's Parquet part of a version pair.
  std::string part_name() const;
  bool holds(std::string_view model_id) const;
};

// "K/N" with 1 <= K <= N; throws Error(kUsage) naming --shard otherwise.
SweepShard parse_sweep_shard(std::string_view text);

}  // namespace canrun
