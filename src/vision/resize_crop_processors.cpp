// Processors that resize each image to one size (CLIP's short side, SigLIP's and Gemma 3's fixed
// height x width), then center crop; Gemma 3's pan-and-scan adds crops of elongated images.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "util/error.h"
#include "vision/processor_kinds.h"
#include "vision/processor_steps.h"
#include "vision/resample.h"

namespace canrun {

namespace {

// transformers' get_resize_output_image_size without max_size: the short side becomes `edge`,
// the long side edge * long / short, cut to a whole number.
std::pair<int, int> shortest_edge_size(int height, int width, int edge) {
  const int short_side = std::min(height, width), long_side = std::max(height, width);
  const int new_long = static_cast<int>(static_cast<double>(int64_t{edge} * long_side) / short_side);
  return width <= height ? std::pair{new_long, edge} : std::pair{edge, new_long};
}

// Gemma 3's pan_and_scan_batched: equal crops along the long side (the last one cut by the
// image's edge), or none when the image is not elongated enough or a crop would be too small.
std::vector<RgbImage> pan_and_scan_crops(const ImageProcessorConfig& config, const RgbImage& image) {
  const int width = image.width, height = image.height;
  const bool landscape = width >= height;
  const double ratio = landscape ? static_cast<double>(width) / height : static_cast<double>(height) / width;
  if (ratio < config.pan_and_scan_min_ratio) return {};
  int crops = static_cast<int>(std::floor(ratio + 0.5));
  crops = std::min(crops, static_cast<int>(std::floor(static_cast<double>(landscape ? width : height) /
                                                      config.pan_and_scan_min_crop_size)));
  crops = std::min(config.pan_and_scan_max_num_crops, std::max(2, crops));
  const int crops_w = landscape ? crops : 1, crops_h = landscape ? 1 : crops;
  const int crop_w = static_cast<int>(std::ceil(static_cast<double>(width) / crops_w));
  const int crop_h = static_cast<int>(std::ceil(static_cast<double>(height) / crops_h));
  if (std::min(crop_w, crop_h) < config.pan_and_scan_min_crop_size) return {};
  std::vector<RgbImage> out;
  for (int row = 0; row < crops_h; ++row)
    for (int column = 0; column < crops_w; ++column) {
      const int top = row * crop_h, left = column * crop_w;
      RgbImage crop(std::min(crop_w, width - left), std::min(crop_h, height - top));
      for (int y = 0; y < crop.height; ++y) std::copy_n(image.at(left, top + y), crop.width * 3, crop.at(0, y));
      out.push_back(std::move(crop));
    }
  return out;
}

// One row: the image (or one of its crops) resized, center-cropped and normalised.
void append_resized_view(const ImageProcessorConfig& config, const RgbImage& view, bool resize, PixelValues& out) {
  int height = view.height, width = view.width;
  if (resize)
    std::tie(height, width) = config.shortest_edge > 0
                                  ? shortest_edge_size(view.height, view.width, config.shortest_edge)
                                  : std::pair{config.height, config.width};
  RgbImage resized = resize_image(view, width, height, config.resample);
  if (config.do_center_crop) resized = center_crop(resized, config.crop_height, config.crop_width);
  const std::vector<float> planes = normalized_planes(config, resized);
  if (out.rows > 0 && out.cols != static_cast<int64_t>(planes.size()))
    fail(ErrorKind::kUsage, "images of different sizes with do_resize off cannot be stacked");
  append_planes(planes, out);
}

}  // namespace

void append_resize_crop_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  if (config.do_pan_and_scan) {
    // The whole image first, then its crops; all resized, whatever do_resize says.
    const std::vector<RgbImage> crops = pan_and_scan_crops(config, image);
    append_resized_view(config, image, true, out);
    for (const RgbImage& crop : crops) append_resized_view(config, crop, true, out);
    out.num_crops.push_back(static_cast<int64_t>(crops.size()));
  } else {
    append_resized_view(config, image, config.do_resize, out);
    if (config.class_name == "Gemma3ImageProcessor") out.num_crops.push_back(0);  // it always says
  }
}

}  // namespace canrun
