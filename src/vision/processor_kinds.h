// Each kind of image processor adds one image's rows (and its grid, crops, tiles or positions)
// to the pixel_values being built; preprocess_images picks the kind's function.
#pragma once

#include "vision/image_processor.h"
#include "vision/rgb_image.h"

namespace canrun {

// patch_processors.cpp
void append_qwen_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);
void append_gemma4_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);
// resize_crop_processors.cpp
void append_resize_crop_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);
// tile_processors.cpp
void append_idefics3_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);
void append_llama4_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);
void append_mllama_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out);

}  // namespace canrun
