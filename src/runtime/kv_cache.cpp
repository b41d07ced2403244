#include "runtime/kv_cache.h"

namespace canrun {

KvCache::KvCache(int64_t num_layers, int64_t num_kv_heads, int64_t key_dim, int64_t value_dim, int64_t capacity)
    : num_kv_heads_(num_kv_heads),
      key_dim_(key_dim),
      value_dim_(value_dim),
      capacity_(capacity),
      keys_(static_cast<size_t>(num_layers * num_kv_heads * capacity * key_dim)),
      values_(static_cast<size_t>(num_layers * num_kv_heads * capacity * value_dim)) {}

}  // namespace canrun
