// The per-sequence state of a program's blocks (the KV cache of each attention layer today; a
// recurrent state for the kinds that keep one): static, sized for a fixed number of positions
// when a sequence starts, never grown. Each block kind defines its own state type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace canrun {

class BlockState {
 public:
  virtual ~BlockState() = default;
  virtual int64_t bytes() const = 0;
};

// One block instance's state, declared when the program is built.
struct StateSlot {
  std::string name;  // "layers.3.kv_cache"
  std::function<int64_t(int64_t capacity)> bytes;
  std::function<std::unique_ptr<BlockState>(int64_t capacity)> make;
};

class SequenceState {
 public:
  SequenceState(int64_t capacity, std::vector<std::unique_ptr<BlockState>> slots)
      : capacity_(capacity), slots_(std::move(slots)) {}
  int64_t capacity() const { return capacity_; }
  int64_t bytes() const;
  // Slot `slot`'s state, of the type its block made.
  template <typename State>
  State& get(int slot) const {
    return static_cast<State&>(*slots_[static_cast<size_t>(slot)]);
  }

 private:
  int64_t capacity_;
  std::vector<std::unique_ptr<BlockState>> slots_;
};

}  // namespace canrun
