#include "vision/processor_steps.h"

#include <algorithm>
#include <array>

#include "tensor/dtype.h"

namespace canrun {

// Row-major float32 values of one resized image, rescaled and normalised as torch does it:
// mean and std scaled by 1/rescale_factor in float32, then (x - mean) / std in float32.
std::vector<float> normalized_planes(const ImageProcessorConfig& config, const RgbImage& image) {
  std::array<float, 3> mean = config.image_mean, std = config.image_std;
  const bool fused = config.do_rescale && config.do_normalize;
  if (fused) {
    const float inverse = static_cast<float>(1.0 / config.rescale_factor);
    for (int c = 0; c < 3; ++c) {
      mean[c] *= inverse;
      std[c] *= inverse;
    }
  }
  const float scale = static_cast<float>(config.rescale_factor);
  const size_t plane = static_cast<size_t>(image.width) * image.height;
  std::vector<float> values(plane * 3);
  for (int c = 0; c < 3; ++c)
    for (size_t index = 0; index < plane; ++index) {
      float value = image.pixels[index * 3 + c];
      if (config.do_normalize) value = (value - mean[c]) / std[c];
      else if (config.do_rescale) value *= scale;
      values[c * plane + index] = value;
    }
  return values;
}

// Llama 4 rescales and normalises in bfloat16, each operation rounded to it, as its processor does.
std::vector<float> bf16_normalized_planes(const ImageProcessorConfig& config, const RgbImage& image) {
  if (!config.do_rescale || !config.do_normalize) return normalized_planes(config, image);
  const auto round = [](float value) { return bf16_to_f32(f32_to_bf16(value)); };
  const float scale = static_cast<float>(config.rescale_factor);
  std::array<float, 3> mean{}, std{};
  for (int c = 0; c < 3; ++c) {
    mean[c] = round(config.image_mean[c]);
    std[c] = round(config.image_std[c]);
  }
  const size_t plane = static_cast<size_t>(image.width) * image.height;
  std::vector<float> values(plane * 3);
  for (int c = 0; c < 3; ++c)
    for (size_t index = 0; index < plane; ++index)
      values[c * plane + index] = round(round(round(image.pixels[index * 3 + c] * scale) - mean[c]) / std[c]);
  return values;
}

// torchvision's center crop: zero padding first where the crop is larger than the image.
RgbImage center_crop(const RgbImage& image, int crop_height, int crop_width) {
  int pad_left = 0, pad_top = 0;
  if (crop_width > image.width) pad_left = (crop_width - image.width) / 2;
  if (crop_height > image.height) pad_top = (crop_height - image.height) / 2;
  const int padded_width = std::max(image.width, crop_width), padded_height = std::max(image.height, crop_height);
  const int top = static_cast<int>((padded_height - crop_height) / 2.0);
  const int left = static_cast<int>((padded_width - crop_width) / 2.0);
  RgbImage out(crop_width, crop_height);  // zero-filled: the padding
  for (int y = 0; y < crop_height; ++y)
    for (int x = 0; x < crop_width; ++x) {
      const int sx = left + x - pad_left, sy = top + y - pad_top;
      if (sx >= 0 && sy >= 0 && sx < image.width && sy < image.height) std::copy_n(image.at(sx, sy), 3, out.at(x, y));
    }
  return out;
}

RgbImage paste_top_left(const RgbImage& image, int canvas_w, int canvas_h) {
  RgbImage canvas(canvas_w, canvas_h);
  for (int y = 0; y < image.height; ++y) std::copy_n(image.at(0, y), image.width * 3, canvas.at(0, y));
  return canvas;
}

void append_planes(const std::vector<float>& planes, PixelValues& out) {
  out.cols = static_cast<int64_t>(planes.size());
  out.values.insert(out.values.end(), planes.begin(), planes.end());
  out.rows += 1;
}

// The tiles of a (C, H, W) canvas, row by row, each (C, tile, tile).
void append_tiles(const std::vector<float>& planes, int canvas_h, int canvas_w, int tile, PixelValues& out) {
  const size_t plane = static_cast<size_t>(canvas_w) * canvas_h;
  for (int row = 0; row < canvas_h / tile; ++row)
    for (int col = 0; col < canvas_w / tile; ++col) {
      std::vector<float> piece;
      piece.reserve(static_cast<size_t>(3) * tile * tile);
      for (int c = 0; c < 3; ++c)
        for (int y = 0; y < tile; ++y) {
          const float* start = planes.data() + c * plane + static_cast<size_t>(row * tile + y) * canvas_w + col * tile;
          piece.insert(piece.end(), start, start + tile);
        }
      append_planes(piece, out);
    }
}

}  // namespace canrun
