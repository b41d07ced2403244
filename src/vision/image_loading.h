// Image files in, RGB out, as transformers' load_image gives them to a processor: JPEG (libjpeg-
// turbo), PNG (libpng) and WebP (libwebp) decoded, the EXIF orientation applied, then converted
// to RGB the way PIL's convert("RGB") does it (alpha dropped, not blended; grayscale repeated;
// palette looked up; CMYK through PIL's cmyk2rgb; 16-bit samples cut to their high byte).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vision/rgb_image.h"

namespace canrun {

// PIL refuses images over twice Image.MAX_IMAGE_PIXELS as decompression bombs; so does canrun,
// unless told another cap.
constexpr int64_t kDefaultMaxImagePixels = 2 * 89'478'485;

// Decodes `bytes`; `name` (the file) is what errors name. Throws Error(kIo) for a file that is
// empty, truncated, corrupt or of another format, and Error(kUsage) for one above `max_pixels`.
RgbImage decode_image(std::span<const uint8_t> bytes, const std::string& name,
                      int64_t max_pixels = kDefaultMaxImagePixels);

// Reads and decodes the file at `path`.
RgbImage load_image(const std::string& path, int64_t max_pixels = kDefaultMaxImagePixels);

}  // namespace canrun
