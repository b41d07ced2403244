#include "vision/image_processor.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "util/error.h"
#include "tensor/dtype.h"
#include "util/json.h"

namespace canrun {

namespace {

constexpr std::array<float, 3> kClipMean{0.48145466f, 0.4578275f, 0.40821073f};
constexpr std::array<float, 3> kClipStd{0.26862954f, 0.26130258f, 0.27577711f};
constexpr std::array<float, 3> kImagenetStandard{0.5f, 0.5f, 0.5f};

[[noreturn]] void bad_field(const ImageProcessorConfig& config, const std::string& field, const std::string& why) {
  fail(ErrorKind::kCheckpoint, config.source + ": " + field + " " + why);
}

bool read_bool(const Json& json, const ImageProcessorConfig& config, const char* field, bool fallback) {
  if (!json.contains(field) || json[field].is_null()) return fallback;
  if (!json[field].is_boolean()) bad_field(config, field, "must be true or false");
  return json[field].get<bool>();
}

int64_t read_positive(const Json& json, const ImageProcessorConfig& config, const std::string& field,
                      int64_t fallback) {
  if (!json.contains(field) || json[field].is_null()) return fallback;
  if (!json[field].is_number_integer() || json[field].get<int64_t>() <= 0 || json[field].get<int64_t>() > (1LL << 40))
    bad_field(config, field, "must be a positive whole number");
  return json[field].get<int64_t>();
}

std::array<float, 3> read_triple(const Json& json, const ImageProcessorConfig& config, const char* field,
                                 std::array<float, 3> fallback) {
  if (!json.contains(field) || json[field].is_null()) return fallback;
  const Json& value = json[field];
  if (value.is_number()) return {value.get<float>(), value.get<float>(), value.get<float>()};
  if (!value.is_array() || value.size() != 3 || !value[0].is_number() || !value[1].is_number() ||
      !value[2].is_number())
    bad_field(config, field, "must be a number or a list of 3 numbers (one per RGB channel)");
  return {value[0].get<float>(), value[1].get<float>(), value[2].get<float>()};
}

Json processor_json(const std::string& model_dir, std::string* source) {
  const std::filesystem::path folder(model_dir);
  if (std::filesystem::exists(folder / "preprocessor_config.json")) {
    *source = (folder / "preprocessor_config.json").string();
    return read_json_file(*source, ErrorKind::kCheckpoint);
  }
  if (std::filesystem::exists(folder / "processor_config.json")) {
    *source = (folder / "processor_config.json").string();
    Json json = read_json_file(*source, ErrorKind::kCheckpoint);
    if (json.is_object() && json.contains("image_processor") && json["image_processor"].is_object())
      return json["image_processor"];
    fail(ErrorKind::kCheckpoint, *source + ": has no \"image_processor\" object");
  }
  fail(ErrorKind::kIo, model_dir + ": has no preprocessor_config.json or processor_config.json, so no image "
                                   "processor (is it an image-text-to-text model?)");
}

// transformers' per-class defaults, for fields a config leaves out.
void apply_class_defaults(ImageProcessorConfig& config) {
  if (config.kind == ImageProcessorKind::kQwen2Vl) {
    config.image_mean = kClipMean;
    config.image_std = kClipStd;
    config.resample = Resampling::kBicubic;
    config.min_pixels = 56 * 56;
    config.max_pixels = 28 * 28 * 1280;
  } else if (config.kind == ImageProcessorKind::kIdefics3) {
    config.image_mean = config.image_std = kImagenetStandard;
    config.resample = Resampling::kLanczos;
  } else if (config.kind == ImageProcessorKind::kLlama4 || config.kind == ImageProcessorKind::kMllama) {
    config.image_mean = config.image_std = kImagenetStandard;
    config.resample = Resampling::kBilinear;
    config.height = config.width = config.kind == ImageProcessorKind::kLlama4 ? 336 : 224;
  } else if (config.kind == ImageProcessorKind::kGemma4) {
    config.image_mean = {0.0f, 0.0f, 0.0f};
    config.image_std = {1.0f, 1.0f, 1.0f};
    config.do_normalize = false;
    config.patch_size = 16;
  } else if (config.class_name == "CLIPImageProcessor") {
    config.image_mean = kClipMean;
    config.image_std = kClipStd;
    config.shortest_edge = 224;
    config.do_center_crop = true;
  } else {
    config.image_mean = config.image_std = kImagenetStandard;
    config.resample = config.class_name == "Gemma3ImageProcessor" ? Resampling::kBilinear : Resampling::kBicubic;
  }
}

void read_size(const Json& json, ImageProcessorConfig& config) {
  if (!json.contains("size") || json["size"].is_null()) return;
  const Json& size = json["size"];
  if (config.kind == ImageProcessorKind::kQwen2Vl) {
    if (!size.is_object()) bad_field(config, "size", "must be an object");
    config.min_pixels = read_positive(size, config, "shortest_edge", config.min_pixels);
    config.max_pixels = read_positive(size, config, "longest_edge", config.max_pixels);
    return;
  }
  if (config.kind == ImageProcessorKind::kIdefics3) {
    if (!size.is_object() || !size.contains("longest_edge"))
      fail(ErrorKind::kUnsupportedOption, config.source + ": size " + size.dump() + " is not supported for " +
                                              config.class_name + " (only {\"longest_edge\"} is)");
    config.longest_edge = static_cast<int>(read_positive(size, config, "longest_edge", 0));
    return;
  }
  // A bare number is a square for Gemma 3 and the short side for CLIP and SigLIP, as
  // transformers' get_size_dict reads it with each class's default_to_square.
  if (size.is_number()) {
    const int value = static_cast<int>(read_positive(json, config, "size", 0));
    if (config.class_name == "Gemma3ImageProcessor") config.height = config.width = value, config.shortest_edge = 0;
    else config.shortest_edge = value;
    return;
  }
  if (!size.is_object()) bad_field(config, "size", "must be a number or an object");
  if (size.contains("height") && size.contains("width")) {
    config.height = static_cast<int>(read_positive(size, config, "height", config.height));
    config.width = static_cast<int>(read_positive(size, config, "width", config.width));
    config.shortest_edge = 0;
  } else if (size.contains("shortest_edge") && !size.contains("longest_edge")) {
    config.shortest_edge = static_cast<int>(read_positive(size, config, "shortest_edge", 0));
  } else {
    fail(ErrorKind::kUnsupportedOption, config.source + ": size " + size.dump() + " is not supported for " +
                                            config.class_name + " ({\"height\", \"width\"} and {\"shortest_edge\"} are)");
  }
}

void read_crop_size(const Json& json, ImageProcessorConfig& config) {
  config.do_center_crop = read_bool(json, config, "do_center_crop", config.do_center_crop);
  if (!json.contains("crop_size") || json["crop_size"].is_null()) return;
  const Json& crop = json["crop_size"];
  if (crop.is_number()) {
    config.crop_height = config.crop_width = static_cast<int>(read_positive(json, config, "crop_size", 0));
  } else if (crop.is_object() && crop.contains("height") && crop.contains("width")) {
    config.crop_height = static_cast<int>(read_positive(crop, config, "height", 0));
    config.crop_width = static_cast<int>(read_positive(crop, config, "width", 0));
  } else {
    bad_field(config, "crop_size", "must be a number or {\"height\", \"width\"}");
  }
}

void read_pan_and_scan(const Json& json, ImageProcessorConfig& config) {
  config.do_pan_and_scan = read_bool(json, config, "do_pan_and_scan", false);
  if (!config.do_pan_and_scan) return;
  for (const char* field : {"pan_and_scan_min_crop_size", "pan_and_scan_max_num_crops",
                            "pan_and_scan_min_ratio_to_activate"})
    if (!json.contains(field) || !json[field].is_number())
      bad_field(config, field, "must be a number when do_pan_and_scan is true");
  config.pan_and_scan_min_crop_size = static_cast<int>(read_positive(json, config, "pan_and_scan_min_crop_size", 0));
  config.pan_and_scan_max_num_crops = static_cast<int>(read_positive(json, config, "pan_and_scan_max_num_crops", 0));
  config.pan_and_scan_min_ratio = json["pan_and_scan_min_ratio_to_activate"].get<double>();
}

void read_image_splitting(const Json& json, ImageProcessorConfig& config) {
  config.do_image_splitting = read_bool(json, config, "do_image_splitting", true);
  if (!json.contains("max_image_size") || json["max_image_size"].is_null()) return;
  const Json& max_size = json["max_image_size"];
  if (!max_size.is_object() || !max_size.contains("longest_edge"))
    bad_field(config, "max_image_size", "must be {\"longest_edge\": N}");
  config.max_image_size = static_cast<int>(read_positive(max_size, config, "longest_edge", 0));
}

void read_soft_tokens(const Json& json, ImageProcessorConfig& config) {
  config.patch_size = static_cast<int>(read_positive(json, config, "patch_size", config.patch_size));
  config.pooling_kernel_size = static_cast<int>(read_positive(json, config, "pooling_kernel_size", 3));
  config.max_soft_tokens = static_cast<int>(read_positive(json, config, "max_soft_tokens", 280));
  if (config.max_soft_tokens != 70 && config.max_soft_tokens != 140 && config.max_soft_tokens != 280 &&
      config.max_soft_tokens != 560 && config.max_soft_tokens != 1120)
    bad_field(config, "max_soft_tokens", "must be one of 70, 140, 280, 560 and 1120 (as transformers checks)");
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

// Llama 4's find_supported_resolutions: every (rows, cols) of at most max_patches tiles, grouped
// by aspect ratio in the order the ratios first appear from the most tiles down, in pixels.
std::vector<std::pair<int, int>> llama4_canvases(int max_patches, int tile) {
  std::vector<std::pair<double, std::vector<std::pair<int, int>>>> by_ratio;
  for (int tiles = max_patches; tiles >= 1; --tiles)
    for (int rows = 1; rows <= tiles; ++rows) {
      if (tiles % rows != 0) continue;
      const int cols = tiles / rows;
      const double ratio = static_cast<double>(rows) / cols;
      auto found = std::find_if(by_ratio.begin(), by_ratio.end(), [&](const auto& entry) { return entry.first == ratio; });
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

// Llama 4's get_max_res_without_distortion: the largest size fitting `target` with the aspect ratio.
std::pair<int, int> llama4_undistorted_size(int height, int width, int target_height, int target_width) {
  const double scale_w = static_cast<double>(target_width) / width;
  const double scale_h = static_cast<double>(target_height) / height;
  if (scale_w < scale_h)
    return {std::max(1, std::min(static_cast<int>(std::floor(height * scale_w)), target_height)),
            std::max(1, target_width)};
  return {std::max(1, target_height), std::max(1, std::min(static_cast<int>(std::floor(width * scale_h)), target_width))};
}

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

// transformers' get_resize_output_image_size without max_size: the short side becomes `edge`,
// the long side edge * long / short, cut to a whole number.
std::pair<int, int> shortest_edge_size(int height, int width, int edge) {
  const int short_side = std::min(height, width), long_side = std::max(height, width);
  const int new_long = static_cast<int>(static_cast<double>(int64_t{edge} * long_side) / short_side);
  return width <= height ? std::pair{new_long, edge} : std::pair{edge, new_long};
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

}  // namespace

ImageProcessorConfig read_image_processor_config(const std::string& model_dir) {
  ImageProcessorConfig config;
  const Json json = processor_json(model_dir, &config.source);
  if (!json.is_object()) fail(ErrorKind::kCheckpoint, config.source + ": must be a JSON object");
  std::string type = string_or(json, "image_processor_type", "");
  if (type.size() > 4 && type.ends_with("Fast")) type.resize(type.size() - 4);
  config.class_name = type;
  if (type == "Qwen2VLImageProcessor") config.kind = ImageProcessorKind::kQwen2Vl;
  else if (type == "CLIPImageProcessor" || type == "SiglipImageProcessor" || type == "Gemma3ImageProcessor")
    config.kind = ImageProcessorKind::kResizeCrop;
  else if (type == "Idefics3ImageProcessor" || type == "SmolVLMImageProcessor")
    config.kind = ImageProcessorKind::kIdefics3;
  else if (type == "Gemma4ImageProcessor")
    config.kind = ImageProcessorKind::kGemma4;
  else if (type == "Llama4ImageProcessor")
    config.kind = ImageProcessorKind::kLlama4;
  else if (type == "MllamaImageProcessor")
    config.kind = ImageProcessorKind::kMllama;
  else
    fail(ErrorKind::kUnsupportedOption,
         config.source + ": image_processor_type \"" + string_or(json, "image_processor_type", "") +
             "\" is not supported (Qwen2VLImageProcessor, CLIPImageProcessor, SiglipImageProcessor, "
             "Gemma3ImageProcessor, Gemma4ImageProcessor, Idefics3ImageProcessor, SmolVLMImageProcessor, "
             "Llama4ImageProcessor and MllamaImageProcessor are)");
  apply_class_defaults(config);

  config.do_resize = read_bool(json, config, "do_resize", true);
  config.do_rescale = read_bool(json, config, "do_rescale", true);
  config.do_normalize = read_bool(json, config, "do_normalize", config.do_normalize);
  if (json.contains("rescale_factor") && !json["rescale_factor"].is_null()) {
    if (!json["rescale_factor"].is_number() || json["rescale_factor"].get<double>() <= 0)
      bad_field(config, "rescale_factor", "must be a positive number");
    config.rescale_factor = json["rescale_factor"].get<double>();
  }
  config.image_mean = read_triple(json, config, "image_mean", config.image_mean);
  config.image_std = read_triple(json, config, "image_std", config.image_std);
  for (float value : config.image_std)
    if (value == 0.0f) bad_field(config, "image_std", "must not be 0");
  if (json.contains("resample") && !json["resample"].is_null()) {
    if (!json["resample"].is_number_integer()) bad_field(config, "resample", "must be a PIL resampling number");
    config.resample = resampling_from_pil(json["resample"].get<int>(), config.source + ": resample");
  }
  if (config.class_name == "Gemma3ImageProcessor") read_pan_and_scan(json, config);
  if (config.kind == ImageProcessorKind::kIdefics3) read_image_splitting(json, config);
  if (config.kind == ImageProcessorKind::kGemma4) read_soft_tokens(json, config);
  if (config.kind == ImageProcessorKind::kLlama4 || config.kind == ImageProcessorKind::kMllama) {
    if (config.kind == ImageProcessorKind::kLlama4) {
      config.max_patches = static_cast<int>(read_positive(json, config, "max_patches", config.max_patches));
      config.resize_to_max_canvas = read_bool(json, config, "resize_to_max_canvas", false);
    } else {
      config.max_image_tiles = static_cast<int>(read_positive(json, config, "max_image_tiles", config.max_image_tiles));
    }
    if (config.height != config.width) bad_field(config, "size", "must be square for " + config.class_name);
    if (!config.do_resize)
      fail(ErrorKind::kUnsupportedOption, config.source + ": do_resize = false is not supported by " + config.class_name +
                                              " (nor by transformers)");
  }
  read_size(json, config);
  if (config.kind == ImageProcessorKind::kResizeCrop) read_crop_size(json, config);
  if (config.kind == ImageProcessorKind::kQwen2Vl) {
    config.min_pixels = read_positive(json, config, "min_pixels", config.min_pixels);
    config.max_pixels = read_positive(json, config, "max_pixels", config.max_pixels);
    config.patch_size = static_cast<int>(read_positive(json, config, "patch_size", config.patch_size));
    config.temporal_patch_size =
        static_cast<int>(read_positive(json, config, "temporal_patch_size", config.temporal_patch_size));
    config.merge_size = static_cast<int>(read_positive(json, config, "merge_size", config.merge_size));
  }
  return config;
}

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

namespace {

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

// One row: the image (or one of its crops) resized, center-cropped and normalised.
void append_resized_view(const ImageProcessorConfig& config, const RgbImage& view, bool resize, PixelValues& out) {
  int height = view.height, width = view.width;
  if (resize)
    std::tie(height, width) = config.shortest_edge > 0 ? shortest_edge_size(view.height, view.width, config.shortest_edge)
                                                       : std::pair{config.height, config.width};
  RgbImage resized = resize_image(view, width, height, config.resample);
  if (config.do_center_crop) resized = center_crop(resized, config.crop_height, config.crop_width);
  const std::vector<float> planes = normalized_planes(config, resized);
  if (out.rows > 0 && out.cols != static_cast<int64_t>(planes.size()))
    fail(ErrorKind::kUsage, "images of different sizes with do_resize off cannot be stacked");
  out.cols = static_cast<int64_t>(planes.size());
  out.values.insert(out.values.end(), planes.begin(), planes.end());
  out.rows += 1;
}

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

}  // namespace

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
  const auto [height, width] = llama4_undistorted_size(image.height, image.width, limit_h, limit_w);
  const RgbImage resized = resize_image(image, width, height, config.resample);
  RgbImage canvas(canvas_w, canvas_h);
  for (int y = 0; y < height; ++y) std::copy_n(resized.at(0, y), width * 3, canvas.at(0, y));
  const int rows = canvas_h / tile, cols = canvas_w / tile;
  append_tiles(bf16_normalized_planes(config, canvas), canvas_h, canvas_w, tile, out);
  if (rows * cols > 1) append_planes(bf16_normalized_planes(config, resize_image(image, tile, tile, config.resample)), out);
  out.tile_rows_cols.push_back({rows, cols});
}

// Mllama: resized without distortion onto its best canvas, padded with black, cut into tiles row
// by row, then zero tiles up to max_image_tiles.
void append_mllama_image(const ImageProcessorConfig& config, const RgbImage& image, PixelValues& out) {
  const int tile = config.height;
  std::vector<std::pair<int, int>> canvases = mllama_arrangements(config.max_image_tiles);
  for (auto& [rows, cols] : canvases) rows *= tile, cols *= tile;
  const auto [canvas_h, canvas_w] = best_fit_canvas(canvases, image.height, image.width, false, false);
  const auto [height, width] = llama4_undistorted_size(image.height, image.width,
                                                       std::clamp(image.height, tile, canvas_h),
                                                       std::clamp(image.width, tile, canvas_w));
  const RgbImage resized = resize_image(image, width, height, config.resample);
  RgbImage canvas(canvas_w, canvas_h);
  for (int y = 0; y < height; ++y) std::copy_n(resized.at(0, y), width * 3, canvas.at(0, y));
  const int rows = canvas_h / tile, cols = canvas_w / tile;
  append_tiles(normalized_planes(config, canvas), canvas_h, canvas_w, tile, out);
  for (int padding = rows * cols; padding < config.max_image_tiles; ++padding)
    append_planes(std::vector<float>(static_cast<size_t>(3) * tile * tile, 0.0f), out);
  out.tile_rows_cols.push_back({rows, cols});
  const std::vector<std::pair<int, int>> arrangements = mllama_arrangements(config.max_image_tiles);
  out.aspect_ratio_ids.push_back(
      std::find(arrangements.begin(), arrangements.end(), std::pair{rows, cols}) - arrangements.begin() + 1);
}

PixelValues preprocess_images(const ImageProcessorConfig& config, const std::vector<RgbImage>& images) {
  PixelValues out;
  for (const RgbImage& image : images) {
    if (config.kind == ImageProcessorKind::kQwen2Vl) {
      append_qwen_image(config, image, out);
    } else if (config.kind == ImageProcessorKind::kIdefics3) {
      append_idefics3_image(config, image, out);
    } else if (config.kind == ImageProcessorKind::kGemma4) {
      append_gemma4_image(config, image, out);
    } else if (config.kind == ImageProcessorKind::kLlama4) {
      append_llama4_image(config, image, out);
    } else if (config.kind == ImageProcessorKind::kMllama) {
      append_mllama_image(config, image, out);
    } else if (config.do_pan_and_scan) {
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
  return out;
}

}  // namespace canrun
