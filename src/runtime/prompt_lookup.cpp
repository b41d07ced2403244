#include "runtime/prompt_lookup.h"

#include <algorithm>

namespace canrun {

std::vector<int32_t> prompt_lookup_draft(std::span<const int32_t> ids, int64_t max_ngram, int64_t max_tokens) {
  const int64_t length = static_cast<int64_t>(ids.size());
  if (max_tokens <= 0) return {};
  for (int64_t n = std::min(max_ngram, length - 1); n >= 1; --n) {
    const std::span<const int32_t> suffix = ids.subspan(static_cast<size_t>(length - n));
    // From the latest start whose n ids are followed by at least one more, back to the first.
    for (int64_t start = length - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), ids.begin() + start)) continue;
      const int64_t from = start + n, to = std::min(length, from + max_tokens);
      return {ids.begin() + from, ids.begin() + to};
    }
  }
  return {};
}

}  // namespace canrun
