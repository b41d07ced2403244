// Reading an image processor's config as transformers does: the class's defaults, then the
// fields the file sets, each checked and named when wrong.
#include <filesystem>

#include "util/error.h"
#include "util/json.h"
#include "vision/image_processor.h"

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
    fail(ErrorKind::kUnsupportedOption,
         config.source + ": size " + size.dump() + " is not supported for " + config.class_name +
             " ({\"height\", \"width\"} and {\"shortest_edge\"} are)");
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
  read_size(json, config);
  if (config.kind == ImageProcessorKind::kLlama4 || config.kind == ImageProcessorKind::kMllama) {
    if (config.kind == ImageProcessorKind::kLlama4) {
      config.max_patches = static_cast<int>(read_positive(json, config, "max_patches", config.max_patches));
      config.resize_to_max_canvas = read_bool(json, config, "resize_to_max_canvas", false);
    } else {
      config.max_image_tiles = static_cast<int>(read_positive(json, config, "max_image_tiles", config.max_image_tiles));
    }
    if (config.height != config.width) bad_field(config, "size", "must be square for " + config.class_name);
    if (!config.do_resize)
      fail(ErrorKind::kUnsupportedOption,
           config.source + ": do_resize = false is not supported by " + config.class_name + " (nor by transformers)");
  }
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

}  // namespace canrun
