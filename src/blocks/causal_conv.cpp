#include "blocks/causal_conv.h"

#include <algorithm>
#include <memory>

namespace canrun {

ConvState::ConvState(int64_t kernel, int64_t channels)
    : rows_(std::max<int64_t>(1, kernel - 1)),
      channels_(channels),
      values_(static_cast<size_t>(rows_ * channels), 0.0f) {}

int declare_conv_state(ProgramBuilder& program, const std::string& name, int64_t kernel, int64_t channels) {
  return program.state({name,
                        [=](const StateShape&) {
                          return std::max<int64_t>(1, kernel - 1) * channels * static_cast<int64_t>(sizeof(float));
                        },
                        [=](const StateShape&) { return std::make_unique<ConvState>(kernel, channels); }});
}

void causal_conv(ConvState& state, const float* weight, const float* bias, int64_t kernel, int64_t channels,
                 int64_t position, const float* in, float* out) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* w = weight + c * kernel;
    float sum = bias == nullptr ? 0.0f : bias[c];
    for (int64_t j = 0; j + 1 < kernel; ++j) {
      const int64_t earlier = position - kernel + 1 + j;
      if (earlier >= 0) sum += w[j] * state.row(earlier)[c];
    }
    out[c] = sum + w[kernel - 1] * in[c];
  }
  if (kernel > 1) std::copy_n(in, channels, state.row(position));
}

}  // namespace canrun
