#include "cli/image_options.h"

#include "cli/option_checks.h"
#include "util/error.h"
#include "vision/multimodal_prompt.h"

namespace canrun {

void add_image_options(CLI::App& command, ImageFlags& flags, const std::string& image_help) {
  command.add_option("--image", flags.files, image_help)->check(regular_file_check());
  command.add_option("--max-image-pixels", flags.max_pixels,
                     "Refuse images with more pixels than this (default: PIL's decompression-bomb cap)")
      ->check(CLI::PositiveNumber);
}

void check_takes_images(const DecoderSpec& spec, const std::string& model_dir, const std::string& option) {
  if (spec.image_token_id < 0)
    fail(ErrorKind::kUsage,
         option + ": " + model_dir + " is a text model (" + spec.model_type + "); it takes no images");
}

std::optional<PreparedImages> prepare_images(const std::string& model_dir, const std::vector<std::string>& paths,
                                             int64_t max_pixels) {
  if (paths.empty()) return std::nullopt;
  std::vector<RgbImage> images;
  for (const std::string& path : paths) images.push_back(load_image(path, max_pixels));
  const ImageProcessorConfig processor = read_image_processor_config(model_dir);
  PreparedImages prepared{preprocess_images(processor, images), {}};
  prepared.token_counts = image_token_counts(prepared.pixels.grid_thw, processor.merge_size);
  return prepared;
}

}  // namespace canrun
