// Builds a Program: block kinds declare values, append steps in order, register the matrices
// their steps read and the per-sequence state they keep.
#pragma once

#include <memory>
#include <string>

#include "program/program.h"

namespace canrun {

class ProgramBuilder {
 public:
  ValueId value(std::string name, int64_t width, ValueRows rows = ValueRows::kTokens);
  const ValueInfo& info(ValueId id) const { return program_.values_[static_cast<size_t>(id)]; }

  // Appends a step; its name must be new to the program.
  void add(std::unique_ptr<Step> step);
  template <typename S, typename... Args>
  void add(Args&&... args) {
    add(std::unique_ptr<Step>(std::make_unique<S>(std::forward<Args>(args)...)));
  }

  // A matrix the steps read, under a name new to the program (an empty one, from a listing
  // without weights, is not registered).
  void matrix(std::string name, WeightMatrix& m);
  // Declares a per-sequence state; returns its slot for SequenceState::get.
  int state(StateSlot slot);
  // The slot of the state declared under `name` (an earlier layer's, to share it); -1: none.
  int find_state(const std::string& name) const;
  // Keeps `part` (a block and its weights) alive as long as the program.
  template <typename Part>
  Part& keep(std::unique_ptr<Part> part) {
    Part& kept = *part;
    program_.parts_.push_back(std::move(part));
    return kept;
  }
  void set_output(ValueId id) { program_.output_ = id; }

  Program finish();

 private:
  Program program_;
};

}  // namespace canrun
