// The `cpu` backend's attention.
//
// attend: ref::attend's contract (same arguments, same score normalisation) for one query's
// kv head, summed in f32 with the vector primitives, the heads sharing each load of a cached key
// or value; the cached values are read row by row into accumulators held in registers. Decode
// and causal prefill run it once per query.
//
// attention_in_tiles: a whole not-causal attention (an encoder's), kTileQueries queries of a
// head at a time as two panel products (scores, then probabilities times values) over the kv
// head's keys and values packed once into panels: the vector unit stays busy on 8 queries per
// load where attend's per-query dot products wait on loads (a fifth of an encoder's time).
#pragma once

#include <cstdint>

#include "kernels/kernel_table.h"

namespace canrun::cpu {

void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out);

// Whether attention_in_tiles runs `args`: not causal, f32 keys and values, no sparse keep and no
// sinks (a window, a chunk-free soft cap and a position bias are all taken).
bool attends_in_tiles(const AttentionArgs& args);
// ref::attention's contract for the args attends_in_tiles takes; each query's outputs are f32
// sums over its visible positions, within f32 rounding of attend's.
void attention_in_tiles(const AttentionArgs& args);

}  // namespace canrun::cpu
