#include "lab/sweep_shard.h"

#include <charconv>

#include "util/error.h"

namespace canrun {
namespace {

// FNV-1a: small, and the same on every machine and build (std::hash is neither promised).
uint64_t stable_hash(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

bool parse_count(std::string_view text, int64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string SweepShard::part_name() const {
  return "part-" + std::to_string(index) + "-of-" + std::to_string(count);
}

bool SweepShard::holds(std::string_view model_id) const {
  return static_cast<int64_t>(stable_hash(model_id) % static_cast<uint64_t>(count)) == index - 1;
}

SweepShard parse_sweep_shard(std::string_view text) {
  const size_t slash = text.find('/');
  SweepShard shard;
  if (slash == std::string_view::npos || !parse_count(text.substr(0, slash), shard.index) ||
      !parse_count(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 1 ||
      shard.index > shard.count || shard.count > 100000)
    fail(ErrorKind::kUsage, "--shard '" + std::string(text) +
                                "': expected K/N, the K-th of N slices with 1 <= K <= N <= 100000 (e.g. 2/8)");
  return shard;
}

}  // namespace canrun
