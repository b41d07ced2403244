#include "tensor/mxfp4.h"

#include <cmath>

namespace canrun {
namespace {

constexpr float kE2M1[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

}  // namespace

std::vector<float> dequantize_mxfp4(const std::byte* blocks, const std::byte* scales, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const int64_t groups = cols / 32;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      const int exponent = static_cast<int>(std::to_integer<uint8_t>(scales[r * groups + g])) - 127;
      const std::byte* block = blocks + (r * groups + g) * 16;
      float* y = out.data() + r * cols + g * 32;
      for (int64_t b = 0; b < 16; ++b) {
        const uint8_t byte = std::to_integer<uint8_t>(block[b]);
        y[2 * b] = std::ldexp(kE2M1[byte & 0x0F], exponent);
        y[2 * b + 1] = std::ldexp(kE2M1[byte >> 4], exponent);
      }
    }
  }
  return out;
}

}  // namespace canrun
