// The steps image processors share: rescale and normalise as torch does (float32, or bfloat16 for
// Llama 4), center crop, pasting onto a black canvas, and cutting a canvas into tiles.
#pragma once

#include <vector>

#include "vision/image_processor.h"
#include "vision/rgb_image.h"

namespace canrun {

// Row-major (C, H, W) float32 values of an image, rescaled and normalised as torch does it.
std::vector<float> normalized_planes(const ImageProcessorConfig& config, const RgbImage& image);

// The same, each operation rounded to bfloat16, as Llama 4's processor computes it.
std::vector<float> bf16_normalized_planes(const ImageProcessorConfig& config, const RgbImage& image);

// torchvision's center crop: zero padding first where the crop is larger than the image.
RgbImage center_crop(const RgbImage& image, int crop_height, int crop_width);

// The image at the top left of a black canvas of canvas_w x canvas_h.
RgbImage paste_top_left(const RgbImage& image, int canvas_w, int canvas_h);

// One more row of pixel_values.
void append_planes(const std::vector<float>& planes, PixelValues& out);

// The tiles of a (C, H, W) canvas, row by row, each (C, tile, tile), as rows of pixel_values.
void append_tiles(const std::vector<float>& planes, int canvas_h, int canvas_w, int tile, PixelValues& out);

}  // namespace canrun
