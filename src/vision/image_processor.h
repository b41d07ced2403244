// A model's image processor as transformers 5.23.0 runs it by default (its torchvision
// backend), read from the folder's preprocessor_config.json (or the "image_processor" object of
// processor_config.json): Qwen2-VL's (also Qwen2.5-VL's, Qwen3-VL's and Qwen3.5's) smart resize
// into patches, the resize-then-crop of CLIP (LLaVA), SigLIP and Gemma 3 (with its pan-and-scan),
// Idefics3's (SmolVLM's) splitting into square tiles, Gemma 4's patches with positions, and
// Llama 4's and Mllama's tiles on their best-fitting canvases (Llama 4 normalising in bfloat16).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vision/resample.h"
#include "vision/rgb_image.h"

namespace canrun {

enum class ImageProcessorKind {
  kQwen2Vl,     // Qwen2VLImageProcessor: smart_resize, then patches of (C, T, P, P) in merge order
  kResizeCrop,  // CLIP, SigLIP, Gemma 3: resize, center crop, one (C, H, W) array per image
  kIdefics3,    // Idefics3, SmolVLM: tiles of max_image_size and the whole image, each (C, M, M)
  kGemma4,      // Gemma 4: patches of (y, x, C), padded to max_soft_tokens * pooling^2, (x, y) positions
  kLlama4,      // Llama 4: tiles of size on a canvas of at most max_patches tiles, and a global tile
  kMllama,      // Mllama: tiles of size on a canvas of at most max_image_tiles, zero tiles after them
};

struct ImageProcessorConfig {
  std::string source;      // the file it was read from, for errors
  std::string class_name;  // image_processor_type, without "Fast"
  ImageProcessorKind kind = ImageProcessorKind::kResizeCrop;
  bool do_resize = true;
  bool do_rescale = true;
  bool do_normalize = true;
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> image_mean{};
  std::array<float, 3> image_std{};
  Resampling resample = Resampling::kBicubic;
  int height = 224, width = 224;  // kResizeCrop: size {height, width}, unless shortest_edge is set
  int shortest_edge = 0;          // kResizeCrop: the short side becomes this, the aspect ratio kept
  bool do_center_crop = false;
  int crop_height = 224, crop_width = 224;
  // Gemma 3's pan-and-scan: an image whose aspect ratio reaches min_ratio also gives 2 to
  // max_num_crops crops along its long side (none smaller than min_crop_size), each resized too.
  bool do_pan_and_scan = false;
  int pan_and_scan_min_crop_size = 0, pan_and_scan_max_num_crops = 0;
  double pan_and_scan_min_ratio = 0.0;
  // Idefics3: the long side first resized to longest_edge, then tiles of max_image_size.
  int longest_edge = 4 * 364, max_image_size = 364;
  bool do_image_splitting = true;
  int64_t min_pixels = 0, max_pixels = 0;  // kQwen2Vl: size.shortest_edge / longest_edge
  int patch_size = 14, temporal_patch_size = 2, merge_size = 2;  // kQwen2Vl (patch_size: Gemma 4 too)
  // Gemma 4: at most max_soft_tokens * pooling_kernel_size^2 patches an image.
  int max_soft_tokens = 280, pooling_kernel_size = 3;
  // Llama 4 (height and width above are its tile): canvases of up to max_patches tiles.
  int max_patches = 16;
  bool resize_to_max_canvas = false;
  int max_image_tiles = 4;  // Mllama
};

// Throws Error(kIo) when the folder has no processor config, Error(kCheckpoint) naming the field
// for a malformed one, and Error(kUnsupportedOption) for a processor class canrun lacks.
ImageProcessorConfig read_image_processor_config(const std::string& model_dir);

// The processor's output for a list of images, as transformers returns `pixel_values`: a 2-D
// row-major array (Qwen: one row per patch, all images' patches in order; resize-crop: one row
// per image, C*H*W, each image followed by its pan-and-scan crops; Idefics3: one row per tile,
// each image's tiles then the image itself; Gemma 4: max patches rows per image, zero rows after
// its own), for Qwen each image's (t, h, w) patch grid, with pan-and-scan each image's number of
// crops, for Idefics3, Llama 4 and Mllama each image's tile (rows, cols), for Mllama each image's
// aspect ratio id (1 + the arrangement's index among those Mllama supports), and
// for Gemma 4 each row's (x, y) patch position ((-1, -1) for padding) and each image's number of
// soft tokens.
struct PixelValues {
  std::vector<float> values;
  int64_t rows = 0, cols = 0;
  std::vector<std::array<int64_t, 3>> grid_thw;
  std::vector<int64_t> num_crops;
  std::vector<std::array<int64_t, 2>> tile_rows_cols;
  std::vector<std::array<int64_t, 2>> patch_positions;
  std::vector<int64_t> num_soft_tokens;
  std::vector<int64_t> aspect_ratio_ids;
};

PixelValues preprocess_images(const ImageProcessorConfig& config, const std::vector<RgbImage>& images);

// Qwen2-VL's smart_resize: (height, width) rounded to multiples of `factor` with the pixel count
// brought within [min_pixels, max_pixels]. Throws Error(kUsage) for an aspect ratio above 200.
std::pair<int, int> smart_resize(int height, int width, int factor, int64_t min_pixels, int64_t max_pixels);

}  // namespace canrun
