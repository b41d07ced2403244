// The recurrent state of a linear-attention or state-space layer (the Gated DeltaNet's delta-rule
// matrices, Mamba-2's SSM states): a fixed block of floats per sequence, zero at its start, the
// same size whatever the sequence's length.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/softplus.h"
#include "program/program_builder.h"
#include "program/sequence_state.h"

namespace canrun {

class RecurrentState : public BlockState {
 public:
  explicit RecurrentState(int64_t floats) : values_(static_cast<size_t>(floats), 0.0f) {}
  float* data() { return values_.data(); }
  int64_t bytes() const override { return static_cast<int64_t>(values_.size() * sizeof(float)); }

 private:
  std::vector<float> values_;
};

// Declares a layer's recurrent state of `floats` floats; returns its slot.
int declare_recurrent_state(ProgramBuilder& program, const std::string& name, int64_t floats);

}  // namespace canrun
