// Processors that cut images into patches: Qwen2-VL's (Qwen2.5-VL, Qwen3-VL, Qwen3.5) smart
// resize and merge-ordered patches, and Gemma 4's patch budget with padding and positions.
#include <cmath>
#include <tuple>

#include "util/error.h"
#include "vision/processor_kinds.h"
#include "vision/processor_steps.h"
#include "vision/resample.h"

namespace canrun {

namespace {

// Qwen2-VL's patchify: patches in (merge block row, merge block column, row in block, column in
// block) order, each holding (channel, temporal copy, y, x).
void append_patches(const ImageProcessorConfig& config, const std::vector<float>& planes, int height, int width,
                    PixelValues& out) {
  const int p = config.patch_size, m = config.merge_size, t = config.temporal_patch_size;
  const int grid_h = height / p, grid_w = width / p;
  const size_t plane = static_cast<size_t>(height) * width;
  for (int block_y = 0; block_y < grid_h / m; ++block_y)
    for (int block_x = 0; block_x < grid_w / m; ++block_x)
      for (int in_y = 0; in_y < m; ++in_y)
        for (int in_x = 0; in_x < m; ++in_x) {
          const int top = (block_y * m + in_y) * p, left = (block_x * m + in_x) * p;
          for (int c = 0; c < 3; ++c)
            for (int copy = 0; copy < t; ++copy)
              for (int y = 0; y < p; ++y) {
                const float* row = planes.data() + c * plane + static_cast<size_t>(top + y) * width + left;
                out.values.insert(out.values.end(), row, row + p);
              }
        }
  out.rows += static_cast<int64_t>(grid_h) * grid_w;
  out.grid_thw.push_back({1, grid_h, grid_w});
}

// Gemma 4's get_aspect_ratio_preserving_size: the largest size with at most max_patches patches
// whose sides are multiples of pooling * patch, keeping the aspect ratio.
std::pair<int, int> gemma4_size(const ImageProcessorConfig& config, int height, int width) {
  const int64_t max_patches = int64_t{config.max_soft_tokens} * config.pooling_kernel_size * config.pooling_kernel_size;
  const double target_px = static_cast<double>(max_patches) * config.patch_size * config.patch_size;
  const double factor = std::sqrt(target_px / (static_cast<double>(height) * width));
  const int side = config.pooling_kernel_size * config.patch_size;
  int target_height = static_cast<int>(std::floor(factor * height / side)) * side;
  int target_width = static_cast<int>(std::floor(factor * width / side)) * side;
  const int max_side = static_cast<int>(max_patches / (config.pooling_kernel_size * config.pooling_kernel_size)) * side;
  if (target_height == 0 && target_width == 0)
    fail(ErrorKind::kUsage, "an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " would be resized to 0x0 by Gemma 4's image processor");
  if (target_height == 0) {
    target_height = side;
    target_width = std::min(static_cast<int>(std::floor(static_cast<double>(width) / height)) * side, max_side);
  } else if (target_width == 0) {
    target_width = side;
    target_height = std::min(static_cast<int>(std::floor(static_cast<double>(height) / width)) * side, max_side);
  }
  if (static_cast<double>(target_height) * target_width > target_px)
    fail(ErrorKind::kUsage, "an image of " + std::to_string(width) + "x" + std::to_string(height) + " would need " +
                                "more than " + std::to_string(max_patches) + " patches in Gemma 4's image processor");
  return {target_height, target_width};
}

}  // namespace

std::pair<int, int> smart_resize(int height, int width, int factor, int64_t min_pixels, int64_t max_pixels) {
  const double ratio = static_cast<double>(std::max(height, width)) / std::min(height, width);
  if (ratio > 200)
    fail(ErrorKind::kUsage, "an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " has an aspect ratio above 200, which Qwen's image processor refuses");
  // Python's round() rounds halves to even, as nearbyint does in the default rounding mode.
  int64_t h_bar = static_cast<int64_t>(std::nearbyint(static_cast<double>(height) / factor)) * factor;
  int64_t w_bar = static_cast<int64_t>(std::nearbyint(static_cast<double>(width) / factor)) * factor;
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt(static_cast<double>(height) * width / static_cast<double>(max_pixels));
    h_bar = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(height / beta / factor)) * factor);
    w_bar = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(width / beta / factor)) * factor);
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (static_cast<double>(height) * width));
    h_bar = static_cast<int64_t>(std::ceil(height * beta / factor)) * factor;
    w_bar = static_cast<int64_t>(std::ceil(width * beta / factor)) * factor;
  }
  return {static_cast<int>(h_bar), static_cast<int>(w_bar)};
}

void append_qwen_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  int height = image.height, width = image.width;
  const int factor = config.patch_size * config.merge_size;
  if (config.do_resize)
    std::tie(height, width) = smart_resize(image.height, image.width, factor, config.min_pixels, config.max_pixels);
  if (height % factor != 0 || width % factor != 0)
    fail(ErrorKind::kUsage, "an image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                                " is not a multiple of " + std::to_string(factor) + " pixels and do_resize is off");
  const std::vector<float> planes = normalized_planes(config, resize_image(image, width, height, config.resample));
  out.cols = int64_t{3} * config.temporal_patch_size * config.patch_size * config.patch_size;
  append_patches(config, planes, height, width, out);
}

// Gemma 4: patches of (y, x, channel) in row-major patch order, then zero rows up to the most
// patches an image may have; positions (x, y), (-1, -1) for padding.
void append_gemma4_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  RgbImage resized = image;
  if (config.do_resize) {
    const auto [height, width] = gemma4_size(config, image.height, image.width);
    resized = resize_image(image, width, height, config.resample);
  }
  const std::vector<float> planes = normalized_planes(config, resized);
  const int p = config.patch_size;
  const int patches_h = resized.height / p, patches_w = resized.width / p;
  const int64_t max_patches =
      int64_t{config.max_soft_tokens} * config.pooling_kernel_size * config.pooling_kernel_size;
  const size_t plane = static_cast<size_t>(resized.width) * resized.height;
  out.cols = int64_t{3} * p * p;
  for (int py = 0; py < patches_h; ++py)
    for (int px = 0; px < patches_w; ++px) {
      for (int y = 0; y < p; ++y)
        for (int x = 0; x < p; ++x)
          for (int c = 0; c < 3; ++c)
            out.values.push_back(planes[c * plane + static_cast<size_t>(py * p + y) * resized.width + px * p + x]);
      out.patch_positions.push_back({px, py});
    }
  const int64_t patches = int64_t{patches_h} * patches_w;
  out.values.resize(out.values.size() + static_cast<size_t>((max_patches - patches) * out.cols), 0.0f);
  out.patch_positions.resize(out.patch_positions.size() + static_cast<size_t>(max_patches - patches), {-1, -1});
  out.rows += max_patches;
  out.num_soft_tokens.push_back(patches / (config.pooling_kernel_size * config.pooling_kernel_size));
}

}  // namespace canrun
