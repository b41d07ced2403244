// The `cpu` backend's attention for a kv head's query heads: ref::attend's contract (same
// arguments, same score normalisation), summed in f32 with the vector primitives, the heads
// sharing each load of a cached key or value; the cached values are read row by row into
// accumulators held in registers.
#pragma once

#include <cstdint>

#include "kernels/kernel_table.h"

namespace canrun::cpu {

void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out);

}  // namespace canrun::cpu
