// Processors that cut images into square tiles: Idefics3's (SmolVLM's) tiles of the image grown to
// tile multiples, and Llama 4's and Mllama's tiles of the best-fitting canvas.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "vision/processor_kinds.h"
#include "vision/processor_steps.h"
#include "vision/resample.h"

namespace canrun {

namespace {

// Idefics3's get_resize_output_image_size: the long side becomes `longest`, the other follows the
// aspect ratio rounded up to even, then both are brought under 4096.
std::pair<int, int> idefics3_resized_size(int height, int width, int longest) {
  const double aspect = static_cast<double>(width) / height;
  if (width >= height) {
    width = longest;
    height = static_cast<int>(width / aspect);
    height += height % 2;
  } else {
    height = longest;
    width = static_cast<int>(height * aspect);
    width += width % 2;
  }
  height = std::max(height, 1);
  width = std::max(width, 1);
  constexpr int kMaxImageSize = 4096;
  const double bounded_aspect = static_cast<double>(width) / height;
  if (width >= height && width > kMaxImageSize) {
    width = kMaxImageSize;
    height = static_cast<int>(width / bounded_aspect);
  } else if (height > width && height > kMaxImageSize) {
    height = kMaxImageSize;
    width = static_cast<int>(height * bounded_aspect);
  }
  return {std::max(height, 1), std::max(width, 1)};
}

// Idefics3's resize_for_vision_encoder: both sides up to multiples of the tile size.
std::pair<int, int> tile_multiple_size(int height, int width, int tile) {
  const double aspect = static_cast<double>(width) / height;
  const auto round_up = [tile](double value) { return static_cast<int>(std::ceil(value / tile)) * tile; };
  if (width >= height) {
    width = round_up(width);
    height = round_up(static_cast<int>(width / aspect));
  } else {
    height = round_up(height);
    width = round_up(static_cast<int>(height * aspect));
  }
  return {height, width};
}

// Llama 4's find_supported_resolutions: every (rows, cols) of at most max_patches tiles, grouped
// by aspect ratio in the order the ratios first appear from the most tiles down, in pixels.
std::vector<std::pair<int, int>> llama4_canvases(int max_patches, int tile) {
  std::vector<std::pair<double, std::vector<std::pair<int, int>>>> by_ratio;
  for (int tiles = max_patches; tiles >= 1; --tiles)
    for (int rows = 1; rows <= tiles; ++rows) {
      if (tiles % rows != 0) continue;
      const int cols = tiles / rows;
      const double ratio = static_cast<double>(rows) / cols;
      auto found =
          std::find_if(by_ratio.begin(), by_ratio.end(), [&](const auto& entry) { return entry.first == ratio; });
      if (found == by_ratio.end()) found = by_ratio.insert(by_ratio.end(), {ratio, {}});
      found->second.push_back({rows * tile, cols * tile});
    }
  std::vector<std::pair<int, int>> canvases;
  for (const auto& [ratio, sizes] : by_ratio) canvases.insert(canvases.end(), sizes.begin(), sizes.end());
  return canvases;
}

// Llama 4's get_best_fit and Mllama's get_optimal_tiled_canvas: the canvas needing the least
// upscaling (or the most, with `largest_upscale`), else the least downscaling; the smallest area
// among equal scales, the first among equal areas. Llama 4 computes the scales in float32 (torch),
// Mllama in float64 (numpy); equal scales are compared at that precision.
std::pair<int, int> best_fit_canvas(const std::vector<std::pair<int, int>>& canvases, int height, int width,
                                    bool largest_upscale, bool float32_scales) {
  std::vector<double> scales;
  for (const auto& [canvas_h, canvas_w] : canvases) {
    const double scale_h = float32_scales ? static_cast<float>(canvas_h) / static_cast<float>(height)
                                          : static_cast<double>(canvas_h) / height;
    const double scale_w = float32_scales ? static_cast<float>(canvas_w) / static_cast<float>(width)
                                          : static_cast<double>(canvas_w) / width;
    scales.push_back(std::min(scale_h, scale_w));
  }
  bool upscaling = false;
  double chosen = 0.0;
  for (double scale : scales)
    if (scale >= 1.0) {
      chosen = !upscaling ? scale : largest_upscale ? std::max(chosen, scale) : std::min(chosen, scale);
      upscaling = true;
    }
  if (!upscaling) {
    chosen = -1.0;
    for (double scale : scales) chosen = std::max(chosen, scale);
  }
  std::pair<int, int> best{0, 0};
  for (size_t index = 0; index < canvases.size(); ++index)
    if (scales[index] == chosen &&
        (best.first == 0 ||
         int64_t{canvases[index].first} * canvases[index].second < int64_t{best.first} * best.second))
      best = canvases[index];
  return best;
}

// Mllama's get_all_supported_aspect_ratios: (a, b) tile arrangements of at most max_tiles tiles,
// a outer; Mllama reads each as (rows, cols) of the canvas.
std::vector<std::pair<int, int>> mllama_arrangements(int max_tiles) {
  std::vector<std::pair<int, int>> arrangements;
  for (int a = 1; a <= max_tiles; ++a)
    for (int b = 1; b <= max_tiles; ++b)
      if (a * b <= max_tiles) arrangements.push_back({a, b});
  return arrangements;
}

// Llama 4's get_max_res_without_distortion (Mllama's get_image_size_fit_to_canvas): the largest
// size fitting `target` with the image's aspect ratio.
std::pair<int, int> undistorted_size(int height, int width, int target_height, int target_width) {
  const double scale_w = static_cast<double>(target_width) / width;
  const double scale_h = static_cast<double>(target_height) / height;
  if (scale_w < scale_h)
    return {std::max(1, std::min(static_cast<int>(std::floor(height * scale_w)), target_height)),
            std::max(1, target_width)};
  return {std::max(1, target_height),
          std::max(1, std::min(static_cast<int>(std::floor(width * scale_h)), target_width))};
}

}  // namespace

// Idefics3's split_images after its two resizes: tiles of max_image_size in row-major order, then
// the whole image squeezed to one tile; an image of one tile stays as it is.
void append_idefics3_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  RgbImage resized = image;
  if (config.do_resize) {
    const auto [height, width] = idefics3_resized_size(image.height, image.width, config.longest_edge);
    resized = resize_image(image, width, height, config.resample);
  }
  const int tile = config.max_image_size;
  std::vector<RgbImage> views;
  int64_t rows = 0, cols = 0;
  if (!config.do_image_splitting) {
    views.push_back(resize_image(resized, tile, tile, config.resample));
  } else {
    const auto [height, width] = tile_multiple_size(resized.height, resized.width, tile);
    const RgbImage multiple = resize_image(resized, width, height, config.resample);
    if (height > tile || width > tile) {
      rows = height / tile;
      cols = width / tile;
      for (int row = 0; row < rows; ++row)
        for (int col = 0; col < cols; ++col) {
          RgbImage piece(tile, tile);
          for (int y = 0; y < tile; ++y)
            std::copy_n(multiple.at(col * tile, row * tile + y), tile * 3, piece.at(0, y));
          views.push_back(std::move(piece));
        }
      views.push_back(resize_image(multiple, tile, tile, config.resample));
    } else {
      views.push_back(multiple);
    }
  }
  for (const RgbImage& view : views) {
    const std::vector<float> planes = normalized_planes(config, view);
    out.cols = static_cast<int64_t>(planes.size());
    out.values.insert(out.values.end(), planes.begin(), planes.end());
    out.rows += 1;
  }
  out.tile_rows_cols.push_back({rows, cols});
}

// Llama 4: resized without distortion onto its best canvas (padded with black), cut into tiles
// row by row, and with more than one tile the whole image resized to one tile after them.
void append_llama4_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  const int tile = config.height;
  const auto [canvas_h, canvas_w] = best_fit_canvas(llama4_canvases(config.max_patches, tile), image.height,
                                                    image.width, config.resize_to_max_canvas, true);
  int limit_h = canvas_h, limit_w = canvas_w;
  if (!config.resize_to_max_canvas) {  // upscaling at most to one tile
    limit_h = std::min(std::max(image.height, tile), canvas_h);
    limit_w = std::min(std::max(image.width, tile), canvas_w);
  }
  const auto [height, width] = undistorted_size(image.height, image.width, limit_h, limit_w);
  const RgbImage resized = resize_image(image, width, height, config.resample);
  const RgbImage canvas = paste_top_left(resized, canvas_w, canvas_h);
  const int rows = canvas_h / tile, cols = canvas_w / tile;
  append_tiles(bf16_normalized_planes(config, canvas), canvas_h, canvas_w, tile, out);
  if (rows * cols > 1)
    append_planes(bf16_normalized_planes(config, resize_image(image, tile, tile, config.resample)), out);
  out.tile_rows_cols.push_back({rows, cols});
}

// Mllama: resized without distortion onto its best canvas, padded with black, cut into tiles row
// by row, then zero tiles up to max_image_tiles.
void append_mllama_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  const int tile = config.height;
  std::vector<std::pair<int, int>> canvases = mllama_arrangements(config.max_image_tiles);
  for (auto& [rows, cols] : canvases) rows *= tile, cols *= tile;
  const auto [canvas_h, canvas_w] = best_fit_canvas(canvases, image.height, image.width, false, false);
  const auto [height, width] = undistorted_size(image.height, image.width,
                                                       std::clamp(image.height, tile, canvas_h),
                                                       std::clamp(image.width, tile, canvas_w));
  const RgbImage resized = resize_image(image, width, height, config.resample);
  const RgbImage canvas = paste_top_left(resized, canvas_w, canvas_h);
  const int rows = canvas_h / tile, cols = canvas_w / tile;
  append_tiles(normalized_planes(config, canvas), canvas_h, canvas_w, tile, out);
  for (int padding = rows * cols; padding < config.max_image_tiles; ++padding)
    append_planes(std::vector<float>(static_cast<size_t>(3) * tile * tile, 0.0f), out);
  out.tile_rows_cols.push_back({rows, cols});
  const std::vector<std::pair<int, int>> arrangements = mllama_arrangements(config.max_image_tiles);
  out.aspect_ratio_ids.push_back(
      std::find(arrangements.begin(), arrangements.end(), std::pair{rows, cols}) - arrangements.begin() + 1);
}

}  // namespace canrun
