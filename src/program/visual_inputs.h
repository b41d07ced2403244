// What a prompt's images give the text model of an image-text-to-text checkpoint: the vision
// tower's features for the image tokens, the earlier features the first layers add (DeepStack),
// and the (t, h, w) rotary positions of the prompt's tokens (M-RoPE). Made once per prompt by the
// vision encoder, read by the steps of a sequence that holds it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace canrun {

struct VisualInputs {
  std::vector<int64_t> image_positions;  // prompt positions of the image tokens, ascending
  std::vector<float> embeds;             // [image tokens, text width]: replace those tokens' embeddings
  std::vector<std::vector<float>> deepstack;  // per early layer, [image tokens, text width]: added after it
  // Per prompt position, the temporal, height and width positions the rotary angles take;
  // after the prompt, position p takes p + rope_delta on all three.
  std::vector<std::array<int64_t, 3>> rope_positions;
  int64_t rope_delta = 0;

  // The row of `position` among the image tokens, or -1.
  int64_t image_row(int64_t position) const;
  // The (t, h, w) rotary positions of sequence position `position`.
  std::array<int64_t, 3> rope_position(int64_t position) const;
};

}  // namespace canrun
