// A depthwise causal convolution over the positions, as lfm2's short convolution and the Gated
// DeltaNet's q/k/v convolution run it: out[c] = bias[c] + sum_j w[c][j] * in[p - kernel + 1 + j][c],
// inputs before position 0 zero. Its per-sequence state is the last kernel - 1 inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/program_builder.h"
#include "program/sequence_state.h"

namespace canrun {

// The convolution's inputs at the last kernel - 1 positions, a row of channels each, kept in a
// ring by position.
class ConvState : public BlockState {
 public:
  ConvState(int64_t kernel, int64_t channels);
  const float* row(int64_t position) const { return values_.data() + (position % rows_) * channels_; }
  float* row(int64_t position) { return values_.data() + (position % rows_) * channels_; }
  int64_t bytes() const override { return static_cast<int64_t>(values_.size() * sizeof(float)); }

 private:
  int64_t rows_, channels_;
  std::vector<float> values_;
};

// Declares a layer's convolution state; returns its slot.
int declare_conv_state(ProgramBuilder& program, const std::string& name, int64_t kernel, int64_t channels);

// One position of the convolution: reads `in` [channels] (weight [channels, kernel], bias
// [channels] or null), writes `out` [channels] and keeps `in` for the positions after it.
void causal_conv(ConvState& state, const float* weight, const float* bias, int64_t kernel, int64_t channels,
                 int64_t position, const float* in, float* out);

}  // namespace canrun
