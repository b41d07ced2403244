// Attention over a static KV cache: the cache as a block state (one per attention layer,
// [kv heads][positions][dim] for keys and values) and the step that attends to it. Shared by
// the attention and latent attention block kinds, which differ in how they fill the cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_table.h"
#include "program/program.h"
#include "program/sequence_state.h"
#include "tensor/float_buffer.h"

namespace canrun {

// Keys and values of each kv head, a row per position, stored as the sequence's kv dtype: f32,
// or bf16 / f16 rounded to nearest even as they are written.
class KvState : public BlockState {
 public:
  KvState(int64_t kv_heads, int64_t key_dim, int64_t value_dim, const StateShape& shape);
  // Writes `count` values of a key row from value `offset` on (latent attention writes a key's
  // two parts apart), or a whole value row.
  void write_key(int64_t kv_head, int64_t position, const float* src, int64_t count, int64_t offset = 0);
  void write_value(int64_t kv_head, int64_t position, const float* src);
  // Kv head 0's rows; kv head h's are h * capacity rows on.
  CachedRows keys() const { return {keys_.data(), dtype_, key_dim_}; }
  CachedRows values() const { return {values_.data(), dtype_, value_dim_}; }
  int64_t bytes() const override { return static_cast<int64_t>(keys_.size() + values_.size()); }
  bool rows_by_position() const override { return true; }
  static int64_t bytes_for(int64_t kv_heads, int64_t key_dim, int64_t value_dim, const StateShape& shape) {
    return kv_heads * shape.capacity * (key_dim + value_dim) * static_cast<int64_t>(dtype_size(shape.kv_dtype));
  }

 private:
  std::byte* element(std::vector<std::byte>& rows, int64_t dim, int64_t kv_head, int64_t position, int64_t offset);

  int64_t key_dim_, value_dim_, capacity_;
  DType dtype_;
  std::vector<std::byte> keys_, values_;
};

// Declares a layer's KV cache; returns its slot.
class ProgramBuilder;
int declare_kv_cache(ProgramBuilder& program, const std::string& name, int64_t kv_heads, int64_t key_dim,
                     int64_t value_dim);

struct AttentionShape {
  int64_t heads = 0, kv_heads = 0, key_dim = 0, value_dim = 0;
  bool causal = true;  // false: each query sees every position of its sequence
  int64_t window = 0;  // 0: full causal
  int64_t chunk = 0;   // 0: no chunks
  float scale = 1, softcap = 0;
  int64_t bias_span = 0;  // positions a relative position bias covers each way (AttentionArgs::bias_span)
};

// inputs {q [tokens, heads * key_dim]}, outputs {context [tokens, heads * value_dim]}: every query
// attends to the cached positions up to its own (the cache already holds this run's keys; not
// causal: to all of them), or
// only to those an indexer kept (`keep_slot`, an IndexerState's; -1: none).
class AttentionStep : public Step {
 public:
  AttentionStep(Info info, int slot, AttentionShape shape, const FloatBuffer& sinks, int keep_slot = -1,
                const FloatBuffer* position_bias = nullptr)
      : Step(std::move(info)),
        slot_(slot),
        shape_(shape),
        sinks_(sinks),
        keep_slot_(keep_slot),
        position_bias_(position_bias) {}
  std::string_view kind() const override { return "attention"; }
  void run(StepContext& context) const override;
  StepCost cost(const Program& program, const RunShape& shape) const override;

 private:
  int slot_;
  AttentionShape shape_;
  const FloatBuffer& sinks_;  // [heads] or empty
  int keep_slot_;
  const FloatBuffer* position_bias_;  // [heads, 2 * shape.bias_span - 1], or null
};

}  // namespace canrun
