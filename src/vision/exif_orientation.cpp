#include "vision/exif_orientation.h"

#include <cstring>

namespace canrun {

namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kShortType = 3;

struct TiffReader {
  std::span<const uint8_t> data;
  bool little_endian = true;

  bool has(size_t offset, size_t size) const { return offset <= data.size() && size <= data.size() - offset; }
  uint16_t u16(size_t offset) const {
    return little_endian ? static_cast<uint16_t>(data[offset] | data[offset + 1] << 8)
                         : static_cast<uint16_t>(data[offset] << 8 | data[offset + 1]);
  }
  uint32_t u32(size_t offset) const {
    return little_endian ? static_cast<uint32_t>(u16(offset) | static_cast<uint32_t>(u16(offset + 2)) << 16)
                         : static_cast<uint32_t>(static_cast<uint32_t>(u16(offset)) << 16 | u16(offset + 2));
  }
};

}  // namespace

int exif_orientation(std::span<const uint8_t> exif) {
  static constexpr uint8_t kPrefix[] = {'E', 'x', 'i', 'f', 0, 0};
  if (exif.size() >= sizeof(kPrefix) && std::memcmp(exif.data(), kPrefix, sizeof(kPrefix)) == 0)
    exif = exif.subspan(sizeof(kPrefix));
  TiffReader tiff{exif};
  if (!tiff.has(0, 8)) return 1;
  if (exif[0] == 'I' && exif[1] == 'I') tiff.little_endian = true;
  else if (exif[0] == 'M' && exif[1] == 'M') tiff.little_endian = false;
  else return 1;
  if (tiff.u16(2) != 42) return 1;
  const size_t directory = tiff.u32(4);
  if (!tiff.has(directory, 2)) return 1;
  const size_t entries = tiff.u16(directory);
  for (size_t index = 0; index < entries; ++index) {
    const size_t entry = directory + 2 + index * 12;
    if (!tiff.has(entry, 12)) return 1;
    if (tiff.u16(entry) != kOrientationTag) continue;
    if (tiff.u16(entry + 2) != kShortType || tiff.u32(entry + 4) < 1) return 1;
    const int value = tiff.u16(entry + 8);
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

RgbImage apply_exif_orientation(const RgbImage& image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int w = image.width, h = image.height;
  const bool swaps = orientation >= 5;
  RgbImage out(swaps ? h : w, swaps ? w : h);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;
      switch (orientation) {
        case 2: sx = w - 1 - x; break;                  // mirror left-right
        case 3: sx = w - 1 - x; sy = h - 1 - y; break;  // half turn
        case 4: sy = h - 1 - y; break;                  // flip top-bottom
        case 5: sx = y; sy = x; break;                  // transpose
        case 6: sx = y; sy = h - 1 - x; break;          // quarter turn clockwise
        case 7: sx = w - 1 - y; sy = h - 1 - x; break;  // transverse
        case 8: sx = w - 1 - y; sy = x; break;          // quarter turn counter-clockwise
      }
      std::memcpy(out.at(x, y), image.at(sx, sy), 3);
    }
  }
  return out;
}

}  // namespace canrun
