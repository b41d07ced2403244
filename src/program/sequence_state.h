// The per-sequence state of a program's blocks (the KV cache of each attention layer today; a
// recurrent state for the kinds that keep one): static, sized for a fixed number of positions
// when a sequence starts, never grown. Each block kind defines its own state type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "program/visual_inputs.h"
#include "tensor/dtype.h"

namespace canrun {

class BlockState {
 public:
  virtual ~BlockState() = default;
  virtual int64_t bytes() const = 0;
  // True when the state is a row per position, and a run reads only the rows of positions before
  // its own and its own: rows written for positions that run again later (speculative decoding's
  // rejected tokens) are written over before anything reads them. A state that folds every token
  // into a summary (a recurrent or convolution state) cannot take a token back.
  virtual bool rows_by_position() const { return false; }
};

// What a sequence's state is made for.
struct StateShape {
  int64_t capacity = 0;          // positions
  DType kv_dtype = DType::kF32;  // what KV caches store (f32; bf16 or f16 halve them)
};

// One block instance's state, declared when the program is built.
struct StateSlot {
  std::string name;  // "layers.3.kv_cache"
  std::function<int64_t(const StateShape&)> bytes;
  std::function<std::unique_ptr<BlockState>(const StateShape&)> make;
};

class SequenceState {
 public:
  SequenceState(StateShape shape, std::vector<std::unique_ptr<BlockState>> slots)
      : shape_(shape), slots_(std::move(slots)) {}
  int64_t capacity() const { return shape_.capacity; }
  const StateShape& shape() const { return shape_; }
  int64_t bytes() const;
  // The first slot whose state is not rows_by_position (-1: none): the sequence cannot take
  // tokens back when it has one.
  int first_folding_slot() const;
  // The prompt's images, for the steps that read them; null when it has none.
  const VisualInputs* visual() const { return visual_.get(); }
  void set_visual(std::shared_ptr<const VisualInputs> visual) { visual_ = std::move(visual); }
  // The token type of each position (an encoder's sentence pair: 0 for the first part, 1 for the
  // second); empty: type 0 everywhere.
  const std::vector<int32_t>& token_types() const { return token_types_; }
  void set_token_types(std::vector<int32_t> types) { token_types_ = std::move(types); }
  // Slot `slot`'s state, of the type its block made.
  template <typename State>
  State& get(int slot) const {
    return static_cast<State&>(*slots_[static_cast<size_t>(slot)]);
  }

 private:
  StateShape shape_;
  std::vector<std::unique_ptr<BlockState>> slots_;
  std::shared_ptr<const VisualInputs> visual_;
  std::vector<int32_t> token_types_;
};

}  // namespace canrun
