// The static KV cache: sized once for a fixed number of positions, never grown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace canrun {

class KvCache {
 public:
  // Keys and values may differ in width (multi-head latent attention).
  KvCache(int64_t num_layers, int64_t num_kv_heads, int64_t key_dim, int64_t value_dim, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  // Rows of key_dim (value_dim) floats for one layer and kv head, indexed by position.
  float* keys(int64_t layer, int64_t kv_head) { return slot(keys_, layer, kv_head, key_dim_); }
  float* values(int64_t layer, int64_t kv_head) { return slot(values_, layer, kv_head, value_dim_); }
  size_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }

 private:
  float* slot(std::vector<float>& storage, int64_t layer, int64_t kv_head, int64_t dim) {
    return storage.data() + ((layer * num_kv_heads_ + kv_head) * capacity_) * dim;
  }
  int64_t num_kv_heads_;
  int64_t key_dim_;
  int64_t value_dim_;
  int64_t capacity_;
  std::vector<float> keys_;
  std::vector<float> values_;
};

}  // namespace canrun
