// The prompt of an image-text-to-text model as its processor and model make it: each image's
// placeholder token repeated once per feature the vision tower gives that image, and what the
// text program reads for it (Qwen3-VL's): the features at those tokens and the M-RoPE positions
// of every token (get_rope_index), (t, h, w) over each image's merged grid.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "program/visual_inputs.h"
#include "vision/qwen_vision.h"

namespace canrun {

// The image tokens each image of `grid_thw` takes: its patches over merge_size^2.
std::vector<int64_t> image_token_counts(const std::vector<std::array<int64_t, 3>>& grid_thw, int64_t merge_size);

// `ids` with the i-th `image_token_id` repeated counts[i] times. Throws Error(kUsage) when the
// prompt has more or fewer placeholders than there are images.
std::vector<int32_t> expand_image_placeholders(std::span<const int32_t> ids, int32_t image_token_id,
                                               const std::vector<int64_t>& counts);

// What the text program reads for an expanded `prompt` whose images gave `features`. Throws
// Error(kUsage) when its runs of image tokens do not match the images' token counts.
std::shared_ptr<VisualInputs> qwen_visual_inputs(std::span<const int32_t> prompt, int32_t image_token_id,
                                                 const std::vector<std::array<int64_t, 3>>& grid_thw,
                                                 int64_t merge_size, VisionFeatures features);

}  // namespace canrun
