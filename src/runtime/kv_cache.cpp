#include "runtime/kv_cache.h"

namespace canrun {

KvCache::KvCache(int64_t num_layers, int64_t num_kv_heads, int64_t head_dim, int64_t capacity)
    : num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      capacity_(capacity),
      keys_(static_cast<size_t>(num_layers * num_kv_heads * capacity * head_dim)),
      values_(keys_.size()) {}

}  // namespace canrun
