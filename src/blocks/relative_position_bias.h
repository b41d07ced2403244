// MPNet's relative position bias: T5's bidirectional buckets of a key's position relative to a
// query's, each bucket a learned bias per head, added to every layer's attention scores.
#pragma once

#include <cstdint>

#include "models/decoder_spec.h"
#include "parallel/shard.h"
#include "tensor/float_buffer.h"

namespace canrun {

// transformers' MPNetEncoder.relative_position_bucket, in its float32 arithmetic: half the
// buckets for keys before the query, half for those after; exact distances up to a quarter of
// the buckets, then logarithmic up to max_distance.
int64_t relative_position_bucket(int64_t relative_position, int64_t buckets, int64_t max_distance);

// The table AttentionArgs::position_bias reads, [heads.count, 2 * spec.max_positions - 1]: query
// head h (of `heads`) and key - query = d at h * (2 * max_positions - 1) + d + max_positions - 1
// hold weights[bucket(d), heads.first + h], `weights` being [spec.relative_buckets, num_heads].
FloatBuffer relative_position_bias(const FloatBuffer& weights, const DecoderSpec& spec, IndexRange heads);

}  // namespace canrun
