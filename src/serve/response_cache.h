// Serialized API answers, kept per dataset snapshot: the page asks the same few lists over and
// over, and a snapshot never changes, so an answer stays right until the next reload. Bounded
// by bytes; the least recently used answers go first. Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace canrun {

class ResponseCache {
 public:
  explicit ResponseCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The body stored for `key` in snapshot `generation`, or null. Asking with a newer generation
  // drops everything kept for older ones.
  std::shared_ptr<const std::string> find(uint64_t generation, const std::string& key);

  // Keeps `body` unless the generation is already outdated or the body alone exceeds the bound.
  void insert(uint64_t generation, const std::string& key, std::shared_ptr<const std::string> body);

  size_t bytes() const;
  size_t entries() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const std::string> body;
  };
  using Order = std::list<Entry>;  // most recently used first

  // Caller holds mutex_. Returns whether `generation` is current (after moving to it).
  bool advance_to(uint64_t generation);
  void evict_until_fits(size_t incoming);

  const size_t max_bytes_;
  mutable std::mutex mutex_;
  uint64_t generation_ = 0;
  size_t bytes_ = 0;
  Order order_;
  std::unordered_map<std::string, Order::iterator> by_key_;
};

}  // namespace canrun
