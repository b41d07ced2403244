// A decoded picture as the image processors take it: 8-bit RGB, rows top to bottom, pixels
// interleaved (R, G, B), as PIL's convert("RGB") hands transformers' processors.
#pragma once

#include <cstdint>
#include <vector>

namespace canrun {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // height * width * 3

  RgbImage() = default;
  RgbImage(int width_, int height_)
      : width(width_), height(height_), pixels(static_cast<size_t>(width_) * height_ * 3) {}
  uint8_t* at(int x, int y) { return pixels.data() + (static_cast<size_t>(y) * width + x) * 3; }
  const uint8_t* at(int x, int y) const { return pixels.data() + (static_cast<size_t>(y) * width + x) * 3; }
};

}  // namespace canrun
