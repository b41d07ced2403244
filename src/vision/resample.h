// Resizing 8-bit images as torchvision's resize does for uint8 tensors on the CPU with
// antialias=True (what transformers' processors call): PIL's separable convolution, filters
// stretched by the scale when shrinking, weights in int16 fixed point with torch's precision
// rule, the horizontal pass first, each pass rounded and clamped to 8 bits.
#pragma once

#include <string>

#include "vision/rgb_image.h"

namespace canrun {

// The resampling filters, numbered as PIL.Image.Resampling (and in preprocessor_config.json).
enum class Resampling { kNearest = 0, kLanczos = 1, kBilinear = 2, kBicubic = 3 };

// Reads a config's "resample" value; throws Error(kUnsupportedOption) naming `field` for one
// canrun does not implement (box, hamming).
Resampling resampling_from_pil(int value, const std::string& field);

RgbImage resize_image(const RgbImage& image, int width, int height, Resampling filter);

}  // namespace canrun
