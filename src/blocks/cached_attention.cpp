#include "blocks/cached_attention.h"

#include <algorithm>

#include "blocks/attention_indexer.h"
#include "program/program_builder.h"
#include "program/step_context.h"

namespace canrun {

KvState::KvState(int64_t kv_heads, int64_t key_dim, int64_t value_dim, const StateShape& shape)
    : key_dim_(key_dim),
      value_dim_(value_dim),
      capacity_(shape.capacity),
      dtype_(shape.kv_dtype),
      keys_(static_cast<size_t>(kv_heads * capacity_ * key_dim) * dtype_size(dtype_)),
      values_(static_cast<size_t>(kv_heads * capacity_ * value_dim) * dtype_size(dtype_)) {}

std::byte* KvState::element(std::vector<std::byte>& rows, int64_t dim, int64_t kv_head, int64_t position,
                            int64_t offset) {
  const int64_t index = (kv_head * capacity_ + position) * dim + offset;
  return rows.data() + index * static_cast<int64_t>(dtype_size(dtype_));
}

void KvState::write_key(int64_t kv_head, int64_t position, const float* src, int64_t count, int64_t offset) {
  narrow_from_f32(dtype_, src, static_cast<size_t>(count), element(keys_, key_dim_, kv_head, position, offset));
}

void KvState::write_value(int64_t kv_head, int64_t position, const float* src) {
  narrow_from_f32(dtype_, src, static_cast<size_t>(value_dim_), element(values_, value_dim_, kv_head, position, 0));
}

int declare_kv_cache(ProgramBuilder& program, const std::string& name, int64_t kv_heads, int64_t key_dim,
                     int64_t value_dim) {
  return program.state(
      {name, [=](const StateShape& shape) { return KvState::bytes_for(kv_heads, key_dim, value_dim, shape); },
       [=](const StateShape& shape) { return std::make_unique<KvState>(kv_heads, key_dim, value_dim, shape); }});
}

void AttentionStep::run(StepContext& c) const {
  KvState& cache = c.state().get<KvState>(slot_);
  AttentionArgs args;
  args.q = c.value(inputs()[0]);
  args.out = c.value(outputs()[0]);
  args.tokens = c.count();
  args.start = c.start();
  args.heads = shape_.heads;
  args.kv_heads = shape_.kv_heads;
  args.keys = cache.keys();
  args.values = cache.values();
  args.key_stride = c.state().capacity() * shape_.key_dim;
  args.value_stride = c.state().capacity() * shape_.value_dim;
  args.causal = shape_.causal;
  args.window = shape_.window;
  args.chunk = shape_.chunk;
  args.scale = shape_.scale;
  args.softcap = shape_.softcap;
  args.sinks = sinks_.empty() ? nullptr : sinks_.data();
  if (position_bias_ != nullptr) {
    args.position_bias = position_bias_->data();
    args.bias_span = shape_.bias_span;
  }
  if (keep_slot_ >= 0) {
    const IndexerState& indexer = c.state().get<IndexerState>(keep_slot_);
    args.keep = indexer.keep();
    args.keep_stride = indexer.capacity();
  }
  c.kernels().attention(args);
}

StepCost AttentionStep::cost(const Program&, const RunShape& shape) const {
  // Not causal, a window runs both ways.
  const int64_t window = shape_.causal ? shape_.window : 2 * shape_.window - 1;
  int64_t seen = shape_.window > 0 ? std::min(shape.positions, window) : shape.positions;
  if (shape_.chunk > 0) seen = std::min(seen, shape_.chunk);
  return {2 * shape.tokens * shape_.heads * (shape_.key_dim + shape_.value_dim) * seen, 0};
}

}  // namespace canrun
