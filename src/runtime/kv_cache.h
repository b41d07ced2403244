// The static KV cache: sized once for a fixed number of positions, never grown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace canrun {

class KvCache {
 public:
  KvCache(int64_t num_layers, int64_t num_kv_heads, int64_t head_dim, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  // Rows of head_dim floats for one layer and kv head, indexed by position.
  float* keys(int64_t layer, int64_t kv_head) { return slot(keys_, layer, kv_head); }
  float* values(int64_t layer, int64_t kv_head) { return slot(values_, layer, kv_head); }
  size_t bytes() const { return 2 * keys_.size() * sizeof(float); }

 private:
  float* slot(std::vector<float>& storage, int64_t layer, int64_t kv_head) {
    return storage.data() + ((layer * num_kv_heads_ + kv_head) * capacity_) * head_dim_;
  }
  int64_t num_kv_heads_;
  int64_t head_dim_;
  int64_t capacity_;
  std::vector<float> keys_;
  std::vector<float> values_;
};

}  // namespace canrun
