// EXIF orientation (tag 0x0112), applied as PIL's ImageOps.exif_transpose does, which is what
// transformers' load_image calls before anything else.
#pragma once

#include <cstdint>
#include <span>

#include "vision/rgb_image.h"

namespace canrun {

// The orientation (1-8) in an EXIF block (a TIFF structure, with or without the "Exif\0\0"
// prefix of a JPEG APP1 segment); 1 when the block is absent, malformed or has no such tag.
int exif_orientation(std::span<const uint8_t> exif);

// The image turned upright: 2 mirrors, 3 turns half way, 4 flips, 5 transposes, 6 turns a
// quarter clockwise, 7 transverses, 8 turns a quarter counter-clockwise; 1 (or any other value)
// leaves it as it is.
RgbImage apply_exif_orientation(const RgbImage& image, int orientation);

}  // namespace canrun
