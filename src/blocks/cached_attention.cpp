#include "blocks/cached_attention.h"

#include <algorithm>

#include "program/program_builder.h"
#include "program/step_context.h"

namespace canrun {

KvState::KvState(int64_t kv_heads, int64_t key_dim, int64_t value_dim, int64_t capacity)
    : key_dim_(key_dim),
      value_dim_(value_dim),
      capacity_(capacity),
      keys_(static_cast<size_t>(kv_heads * capacity * key_dim)),
      values_(static_cast<size_t>(kv_heads * capacity * value_dim)) {}

int declare_kv_cache(ProgramBuilder& program, const std::string& name, int64_t kv_heads, int64_t key_dim,
                     int64_t value_dim) {
  return program.state(
      {name, [=](int64_t capacity) { return KvState::bytes_for(kv_heads, key_dim, value_dim, capacity); },
       [=](int64_t capacity) { return std::make_unique<KvState>(kv_heads, key_dim, value_dim, capacity); }});
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
  args.key_dim = shape_.key_dim;
  args.value_dim = shape_.value_dim;
  args.keys = cache.keys(0);
  args.values = cache.values(0);
  args.key_stride = c.state().capacity() * shape_.key_dim;
  args.value_stride = c.state().capacity() * shape_.value_dim;
  args.window = shape_.window;
  args.scale = shape_.scale;
  args.softcap = shape_.softcap;
  args.sinks = sinks_.empty() ? nullptr : sinks_.data();
  c.kernels().attention(args);
}

StepCost AttentionStep::cost(const Program&, const RunShape& shape) const {
  const int64_t seen = shape_.window > 0 ? std::min(shape.positions, shape_.window) : shape.positions;
  return {2 * shape.tokens * shape_.heads * (shape_.key_dim + shape_.value_dim) * seen, 0};
}

}  // namespace canrun
