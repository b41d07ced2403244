#include "vision/multimodal_prompt.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

std::string images_text(size_t count) { return std::to_string(count) + (count == 1 ? " image" : " images"); }

}  // namespace

std::vector<int64_t> image_token_counts(const std::vector<std::array<int64_t, 3>>& grid_thw, int64_t merge_size) {
  std::vector<int64_t> counts;
  for (const auto& thw : grid_thw) counts.push_back(thw[0] * thw[1] * thw[2] / (merge_size * merge_size));
  return counts;
}

std::vector<int32_t> expand_image_placeholders(std::span<const int32_t> ids, int32_t image_token_id,
                                               const std::vector<int64_t>& counts) {
  const auto placeholders = static_cast<size_t>(std::count(ids.begin(), ids.end(), image_token_id));
  if (placeholders != counts.size())
    fail(ErrorKind::kUsage, "the prompt has " + std::to_string(placeholders) + " image placeholder" +
                                (placeholders == 1 ? "" : "s") + " and there " + (counts.size() == 1 ? "is " : "are ") +
                                images_text(counts.size()) + " (--image)");
  std::vector<int32_t> out;
  size_t image = 0;
  for (int32_t id : ids) {
    if (id != image_token_id) {
      out.push_back(id);
      continue;
    }
    out.insert(out.end(), static_cast<size_t>(counts[image++]), id);
  }
  return out;
}

std::shared_ptr<VisualInputs> qwen_visual_inputs(std::span<const int32_t> prompt, int32_t image_token_id,
                                                 const std::vector<std::array<int64_t, 3>>& grid_thw,
                                                 int64_t merge_size, VisionFeatures features) {
  auto visual = std::make_shared<VisualInputs>();
  const std::vector<int64_t> counts = image_token_counts(grid_thw, merge_size);
  const auto length = static_cast<int64_t>(prompt.size());
  int64_t next = 0;  // the next position a token takes (text advances it by one, an image by its extent)
  size_t image = 0;
  for (int64_t i = 0; i < length;) {
    if (prompt[static_cast<size_t>(i)] != image_token_id) {
      visual->rope_positions.push_back({next, next, next});
      ++next, ++i;
      continue;
    }
    int64_t run = 0;
    while (i + run < length && prompt[static_cast<size_t>(i + run)] == image_token_id) ++run;
    if (image >= counts.size() || run != counts[image])
      fail(ErrorKind::kUsage, "the prompt's image tokens (a run of " + std::to_string(run) +
                                  ") do not match its " + images_text(counts.size()) + "' features");
    const std::array<int64_t, 3>& thw = grid_thw[image++];
    const int64_t grid_h = thw[1] / merge_size, grid_w = thw[2] / merge_size;
    for (int64_t t = 0; t < thw[0]; ++t)
      for (int64_t h = 0; h < grid_h; ++h)
        for (int64_t w = 0; w < grid_w; ++w) {
          visual->rope_positions.push_back({next + t, next + h, next + w});
          visual->image_positions.push_back(i + (t * grid_h + h) * grid_w + w);
        }
    next += std::max(thw[1], thw[2]) / merge_size;
    i += run;
  }
  if (image != counts.size())
    fail(ErrorKind::kUsage, "the prompt has image tokens for " + images_text(image) + " of " +
                                images_text(counts.size()));
  if (features.tokens != static_cast<int64_t>(visual->image_positions.size()))
    fail(ErrorKind::kUsage, "the vision tower gave " + std::to_string(features.tokens) + " features for " +
                                std::to_string(visual->image_positions.size()) + " image tokens");
  int64_t highest = -1;
  for (const auto& thw : visual->rope_positions) highest = std::max({highest, thw[0], thw[1], thw[2]});
  visual->rope_delta = highest + 1 - length;
  visual->embeds = std::move(features.embeds);
  visual->deepstack = std::move(features.deepstack);
  return visual;
}

}  // namespace canrun
