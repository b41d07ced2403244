// `--image` and `--max-image-pixels` of generate and bench: images for an image-text-to-text
// model, read and preprocessed before the model loads, so a bad file costs no load.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "models/decoder_spec.h"
#include "vision/image_loading.h"
#include "vision/image_processor.h"

namespace canrun {

struct ImageFlags {
  std::vector<std::string> files;
  int64_t max_pixels = kDefaultMaxImagePixels;
};

void add_image_options(CLI::App& command, ImageFlags& flags, const std::string& image_help);

// Throws Error(kUsage) naming `option` when `model_dir`, whose spec is `spec`, is a text model.
void check_takes_images(const DecoderSpec& spec, const std::string& model_dir, const std::string& option);

// The images as the model's processor makes them, and the image tokens each one takes.
struct PreparedImages {
  PixelValues pixels;
  std::vector<int64_t> token_counts;
};

// Decodes `paths` (refusing more than `max_pixels` pixels each) and preprocesses them with
// `model_dir`'s processor config; nullopt when there are none.
std::optional<PreparedImages> prepare_images(const std::string& model_dir, const std::vector<std::string>& paths,
                                             int64_t max_pixels);

}  // namespace canrun
