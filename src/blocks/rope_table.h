// The rotary table of one forward pass: per token, cos and sin of its position's angles
// (rotary_dim / 2 of each, times the rope's attention factor), computed once per pass from the
// pass's sequence length as transformers does, and read by every layer that rotates.
#pragma once

#include "models/rope.h"
#include "program/program.h"

namespace canrun {

// outputs {table [tokens, rotary_dim]}: cos in the first half of each row, sin in the second.
class RopeTableStep : public Step {
 public:
  RopeTableStep(Info info, RopeSpec rope) : Step(std::move(info)), rope_(std::move(rope)) {}
  std::string_view kind() const override { return "rope_table"; }
  void run(StepContext& context) const override;

 private:
  RopeSpec rope_;
};

}  // namespace canrun
