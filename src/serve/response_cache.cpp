#include "serve/response_cache.h"

namespace canrun {
namespace {

size_t cost(const std::string& key, const std::string& body) { return key.size() + body.size(); }

}  // namespace

bool ResponseCache::advance_to(uint64_t generation) {
  if (generation < generation_) return false;
  if (generation > generation_) {
    order_.clear();
    by_key_.clear();
    bytes_ = 0;
    generation_ = generation;
  }
  return true;
}

void ResponseCache::evict_until_fits(size_t incoming) {
  while (!order_.empty() && bytes_ + incoming > max_bytes_) {
    const Entry& oldest = order_.back();
    bytes_ -= cost(oldest.key, *oldest.body);
    by_key_.erase(oldest.key);
    order_.pop_back();
  }
}

std::shared_ptr<const std::string> ResponseCache::find(uint64_t generation, const std::string& key) {
  const std::lock_guard lock(mutex_);
  if (!advance_to(generation)) return nullptr;
  const auto found = by_key_.find(key);
  if (found == by_key_.end()) return nullptr;
  order_.splice(order_.begin(), order_, found->second);
  return found->second->body;
}

void ResponseCache::insert(uint64_t generation, const std::string& key, std::shared_ptr<const std::string> body) {
  const size_t incoming = cost(key, *body);
  if (incoming > max_bytes_) return;
  const std::lock_guard lock(mutex_);
  if (!advance_to(generation) || by_key_.contains(key)) return;
  evict_until_fits(incoming);
  order_.push_front({key, std::move(body)});
  by_key_.emplace(key, order_.begin());
  bytes_ += incoming;
}

size_t ResponseCache::bytes() const {
  const std::lock_guard lock(mutex_);
  return bytes_;
}

size_t ResponseCache::entries() const {
  const std::lock_guard lock(mutex_);
  return order_.size();
}

}  // namespace canrun
