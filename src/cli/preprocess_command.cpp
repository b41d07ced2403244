// canrun preprocess MODEL --image FILE...: a model's image processor applied to image files, as
// transformers' processor would give them to the model: sizes, patch grids, and the
// pixel_values array itself (--npy) to compare with transformers'.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "util/json.h"
#include "util/npy.h"
#include "vision/image_loading.h"
#include "vision/image_processor.h"

namespace canrun {
namespace {

struct PreprocessArgs {
  std::string model;
  std::vector<std::string> images;
  std::string npy;
  int64_t max_image_pixels = kDefaultMaxImagePixels;
  bool json = false;
};

void run_preprocess(const PreprocessArgs& args) {
  const ImageProcessorConfig config = read_image_processor_config(args.model);
  std::vector<RgbImage> images;
  for (const std::string& path : args.images) images.push_back(load_image(path, args.max_image_pixels));
  const PixelValues pixels = preprocess_images(config, images);
  if (!args.npy.empty()) write_npy_f32(args.npy, pixels.values.data(), pixels.rows, pixels.cols);

  Json report{{"processor", config.class_name}, {"pixel_values_shape", {pixels.rows, pixels.cols}}};
  for (size_t index = 0; index < images.size(); ++index) {
    Json image{{"file", args.images[index]}, {"width", images[index].width}, {"height", images[index].height}};
    if (!pixels.grid_thw.empty()) image["grid_thw"] = pixels.grid_thw[index];
    if (!pixels.num_crops.empty()) image["num_crops"] = pixels.num_crops[index];
    if (!pixels.tile_rows_cols.empty()) image["tile_rows_cols"] = pixels.tile_rows_cols[index];
    if (!pixels.num_soft_tokens.empty()) image["num_soft_tokens"] = pixels.num_soft_tokens[index];
    if (!pixels.aspect_ratio_ids.empty()) image["aspect_ratio_id"] = pixels.aspect_ratio_ids[index];
    report["images"].push_back(image);
  }
  if (args.json) {
    std::cout << report.dump() << "\n";
    return;
  }
  std::cout << config.class_name << ": pixel_values " << pixels.rows << " x " << pixels.cols << "\n";
  for (const Json& image : report["images"]) {
    std::cout << "  " << image["file"].get<std::string>() << ": " << image["width"] << "x" << image["height"];
    if (image.contains("grid_thw"))
      std::cout << ", patch grid (t, h, w) = (" << image["grid_thw"][0] << ", " << image["grid_thw"][1] << ", "
                << image["grid_thw"][2] << ")";
    if (image.contains("num_crops")) std::cout << ", " << image["num_crops"] << " pan-and-scan crops";
    if (image.contains("tile_rows_cols"))
      std::cout << ", tiles " << image["tile_rows_cols"][0] << " x " << image["tile_rows_cols"][1];
    if (image.contains("num_soft_tokens")) std::cout << ", " << image["num_soft_tokens"] << " soft tokens";
    std::cout << "\n";
  }
  if (!args.npy.empty()) std::cout << "wrote " << args.npy << "\n";
}

}  // namespace

void add_preprocess_command(CLI::App& app) {
  auto args = std::make_shared<PreprocessArgs>();
  CLI::App* command = app.add_subcommand(
      "preprocess", "Apply a model's image processor to image files (JPEG, PNG, WebP): sizes, patch grids, "
                    "pixel_values");
  command->add_option("model", args->model,
                      "model folder with preprocessor_config.json (or processor_config.json), or a Hub id")
      ->required()
      ->transform(hub_model_folder())
      ->check(CLI::ExistingDirectory);
  command->add_option("--image", args->images, "image file; repeat for several, in order")->required();
  command->add_option("--npy", args->npy,
                      "write pixel_values to this .npy file: float32, one row per patch (Qwen, Gemma 4), tile "
                      "or image");
  command->add_option("--max-image-pixels", args->max_image_pixels,
                      "refuse images with more pixels than this (default: PIL's decompression-bomb cap)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--json", args->json, "print one JSON object instead of text");
  command->callback([args] { run_preprocess(*args); });
}

}  // namespace canrun
