#include "vision/image_loading.h"

// jerror.h needs jpeglib.h first.
#include <jpeglib.h>
// clang-format off
#include <jerror.h>
// clang-format on
#include <png.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "util/error.h"
#include "util/json.h"
#include "vision/exif_orientation.h"

namespace canrun {

namespace {

// What a decoder hands on: RGB pixels, and the EXIF block it found (empty if none).
struct Decoded {
  RgbImage image;
  std::vector<uint8_t> exif;
};

[[noreturn]] void fail_decode(const std::string& name, const std::string& format, const std::string& why) {
  fail(ErrorKind::kIo, "image " + name + ": not a readable " + format + " file (" + why + ")");
}

// How a decoder that must not throw (it holds libjpeg's or libpng's state, or their jump buffer)
// ended: an error of the library, or a header naming a size above the cap, for its caller to raise.
struct DecodeEnd {
  std::string library_error;
  bool over_cap = false;
  int64_t width = 0, height = 0;
};

bool within_cap(int64_t width, int64_t height, int64_t max_pixels) {
  return width > 0 && height > 0 && width * height <= max_pixels;
}

void check_size(const std::string& name, int64_t width, int64_t height, int64_t max_pixels) {
  if (width <= 0 || height <= 0) fail(ErrorKind::kIo, "image " + name + ": it has no pixels");
  if (width * height > max_pixels)
    fail(ErrorKind::kUsage, "image " + name + ": " + std::to_string(width) + "x" + std::to_string(height) +
                                " is " + std::to_string(width * height) + " pixels, above the cap of " +
                                std::to_string(max_pixels) + " (--max-image-pixels)");
}

// PIL's cmyk2rgb: MULDIV255(a, b) = a * b / 255 rounded, as integers.
uint8_t cmyk_channel(int value, int black_inverse) {
  const int product = value * black_inverse + 128;
  return static_cast<uint8_t>(std::clamp(black_inverse - (((product >> 8) + product) >> 8), 0, 255));
}

// ---- JPEG -------------------------------------------------------------------------------------

struct JpegErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr info) {
  auto* manager = reinterpret_cast<JpegErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// libjpeg only warns of a file that ends early and fills the rest with gray; PIL refuses it
// ("image file is truncated"), and so does canrun. Other warnings PIL lets pass.
void jpeg_warning(j_common_ptr info, int level) {
  if (level == -1 && info->err->msg_code == JWRN_JPEG_EOF) jpeg_error_exit(info);
}

// Fills `out`, or says why not. The jump buffer lives in this frame, which holds no object with a
// destructor and throws nothing (an exception would leave libjpeg's memory behind).
DecodeEnd decode_jpeg_into(std::span<const uint8_t> bytes, int64_t max_pixels, Decoded* out,
                           std::vector<uint8_t>* row) {
  jpeg_decompress_struct info;
  JpegErrorManager errors;
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = jpeg_error_exit;
  errors.base.emit_message = jpeg_warning;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&info);
    return {errors.message};
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&info, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&info, TRUE);
  if (!within_cap(info.image_width, info.image_height, max_pixels)) {
    jpeg_destroy_decompress(&info);
    return {"", true, info.image_width, info.image_height};
  }
  const bool cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
  info.out_color_space = cmyk ? JCS_CMYK : info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  for (jpeg_saved_marker_ptr marker = info.marker_list; marker; marker = marker->next)
    if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && std::memcmp(marker->data, "Exif\0\0", 6) == 0)
      out->exif.assign(marker->data, marker->data + marker->data_length);
  jpeg_start_decompress(&info);
  out->image = RgbImage(static_cast<int>(info.output_width), static_cast<int>(info.output_height));
  const int components = info.output_components;
  row->resize(static_cast<size_t>(info.output_width) * components);
  // Adobe's CMYK JPEGs store inverted values; PIL reads them as "CMYK;I".
  const bool inverted = cmyk && info.saw_Adobe_marker;
  while (info.output_scanline < info.output_height) {
    const int y = static_cast<int>(info.output_scanline);
    JSAMPROW rows[] = {row->data()};
    jpeg_read_scanlines(&info, rows, 1);
    for (int x = 0; x < out->image.width; ++x) {
      const uint8_t* in = row->data() + static_cast<size_t>(x) * components;
      uint8_t* pixel = out->image.at(x, y);
      if (components == 1) {
        pixel[0] = pixel[1] = pixel[2] = in[0];
      } else if (components == 3) {
        std::memcpy(pixel, in, 3);
      } else {
        int c[4];
        for (int k = 0; k < 4; ++k) c[k] = inverted ? 255 - in[k] : in[k];
        for (int k = 0; k < 3; ++k) pixel[k] = cmyk_channel(c[k], 255 - c[3]);
      }
    }
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return {};
}

Decoded decode_jpeg(std::span<const uint8_t> bytes, const std::string& name, int64_t max_pixels) {
  Decoded out;
  std::vector<uint8_t> row;
  const DecodeEnd end = decode_jpeg_into(bytes, max_pixels, &out, &row);
  if (!end.library_error.empty()) fail_decode(name, "JPEG", end.library_error);
  if (end.over_cap) check_size(name, end.width, end.height, max_pixels);
  return out;
}

// ---- PNG --------------------------------------------------------------------------------------

struct PngSource {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
  char message[256] = {};
};

void png_read_from_memory(png_structp png, png_bytep data, png_size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > source->bytes.size() - source->offset) png_error(png, "the file ends early");
  std::memcpy(data, source->bytes.data() + source->offset, length);
  source->offset += length;
}

void png_error_handler(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof(source->message), "%s", message);
  png_longjmp(png, 1);
}

void png_warning_handler(png_structp, png_const_charp) {}

// A PNG whose tRNS chunk names one transparent colour (a palette with one fully transparent
// entry and the rest opaque, or a gray or RGB key) keeps that colour as PIL's info["transparency"]
// through convert("RGB"); transformers' processor then composites it onto white, so pixels of
// exactly that colour become white. A palette with graded alpha loses its transparency instead.
std::optional<std::array<int, 3>> transparent_color(png_structp png, png_infop info, int color_type, int bit_depth) {
  png_bytep alphas = nullptr;
  int count = 0;
  png_color_16p key = nullptr;
  if (!png_get_tRNS(png, info, &alphas, &count, &key)) return std::nullopt;
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_colorp palette = nullptr;
    int colors = 0;
    if (!alphas || !png_get_PLTE(png, info, &palette, &colors)) return std::nullopt;
    int transparent_index = -1;
    for (int index = 0; index < count; ++index) {
      if (alphas[index] == 255) continue;
      if (alphas[index] != 0 || transparent_index >= 0) return std::nullopt;
      transparent_index = index;
    }
    if (transparent_index < 0 || transparent_index >= colors) return std::nullopt;
    const png_color color = palette[transparent_index];
    return std::array<int, 3>{color.red, color.green, color.blue};
  }
  if (!key) return std::nullopt;
  // 16-bit gray is PIL's "I;16", whose RGB conversion keeps a key transformers cannot use.
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 16) return std::array<int, 3>{key->gray, key->gray, key->gray};
  // A 16-bit RGB key stays 16-bit in PIL and is compared with the 8-bit pixels as it is.
  if (color_type == PNG_COLOR_TYPE_RGB) return std::array<int, 3>{key->red, key->green, key->blue};
  return std::nullopt;
}

DecodeEnd decode_png_into(std::span<const uint8_t> bytes, int64_t max_pixels, Decoded* out,
                          std::vector<uint8_t>* buffer, std::vector<png_bytep>* rows) {
  PngSource source{bytes};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, png_error_handler, png_warning_handler);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return {source.message};
  }
  png_set_read_fn(png, &source, png_read_from_memory);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (!within_cap(width, height, max_pixels)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return {"", true, width, height};
  }
  const int color_type = png_get_color_type(png, info), bit_depth = png_get_bit_depth(png, info);
  // Gray 16-bit is PIL mode "I;16", whose conversion clips at 255; elsewhere PIL keeps the high byte.
  const bool gray16 = bit_depth == 16 && (color_type & PNG_COLOR_MASK_COLOR) == 0;
  // Before the expansion below, which turns tRNS into alpha and forgets it.
  const std::optional<std::array<int, 3>> transparent = transparent_color(png, info, color_type, bit_depth);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (bit_depth == 16 && !gray16) png_set_strip_16(png);
  if (gray16) png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  const int channels = png_get_channels(png, info);
  buffer->resize(row_bytes * height);
  rows->resize(height);
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = buffer->data() + y * row_bytes;
  png_read_image(png, rows->data());
  png_read_end(png, info);
  png_bytep exif = nullptr;
  png_uint_32 exif_length = 0;
  if (png_get_eXIf_1(png, info, &exif_length, &exif) && exif) out->exif.assign(exif, exif + exif_length);
  png_destroy_read_struct(&png, &info, nullptr);

  out->image = RgbImage(static_cast<int>(width), static_cast<int>(height));
  // Gray, gray+alpha, RGB or RGBA (a palette's tRNS becomes alpha); alpha is dropped, as PIL drops it.
  const size_t stride = static_cast<size_t>(channels) * (gray16 ? 2 : 1);
  for (png_uint_32 y = 0; y < height; ++y) {
    const uint8_t* in = (*rows)[y];
    for (png_uint_32 x = 0; x < width; ++x) {
      uint8_t* pixel = out->image.at(static_cast<int>(x), static_cast<int>(y));
      const uint8_t* sample = in + x * stride;
      if (gray16) {
        uint16_t value;
        std::memcpy(&value, sample, 2);
        pixel[0] = pixel[1] = pixel[2] = static_cast<uint8_t>(std::min<uint16_t>(value, 255));
      } else if (channels <= 2) {
        pixel[0] = pixel[1] = pixel[2] = sample[0];
      } else {
        std::memcpy(pixel, sample, 3);
      }
      if (transparent && pixel[0] == (*transparent)[0] && pixel[1] == (*transparent)[1] &&
          pixel[2] == (*transparent)[2])
        pixel[0] = pixel[1] = pixel[2] = 255;
    }
  }
  return {};
}

Decoded decode_png(std::span<const uint8_t> bytes, const std::string& name, int64_t max_pixels) {
  Decoded out;
  std::vector<uint8_t> buffer;
  std::vector<png_bytep> rows;
  const DecodeEnd end = decode_png_into(bytes, max_pixels, &out, &buffer, &rows);
  if (!end.library_error.empty()) fail_decode(name, "PNG", end.library_error);
  if (end.over_cap) check_size(name, end.width, end.height, max_pixels);
  return out;
}

// ---- WebP -------------------------------------------------------------------------------------

Decoded decode_webp(std::span<const uint8_t> bytes, const std::string& name, int64_t max_pixels) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(bytes.data(), bytes.size(), &features) != VP8_STATUS_OK)
    fail_decode(name, "WebP", "its header is malformed");
  if (features.has_animation) fail(ErrorKind::kIo, "image " + name + ": animated WebP is not supported");
  check_size(name, features.width, features.height, max_pixels);
  Decoded out;
  out.image = RgbImage(features.width, features.height);
  if (!WebPDecodeRGBInto(bytes.data(), bytes.size(), out.image.pixels.data(), out.image.pixels.size(),
                         features.width * 3))
    fail_decode(name, "WebP", "its image data is truncated or corrupt");
  const WebPData data{bytes.data(), bytes.size()};
  if (WebPDemuxer* demuxer = WebPDemux(&data)) {
    WebPChunkIterator chunk;
    if (WebPDemuxGetChunk(demuxer, "EXIF", 1, &chunk)) {
      out.exif.assign(chunk.chunk.bytes, chunk.chunk.bytes + chunk.chunk.size);
      WebPDemuxReleaseChunkIterator(&chunk);
    }
    WebPDemuxDelete(demuxer);
  }
  return out;
}

bool starts_with(std::span<const uint8_t> bytes, size_t offset, const char* magic, size_t size) {
  return bytes.size() >= offset + size && std::memcmp(bytes.data() + offset, magic, size) == 0;
}

}  // namespace

RgbImage decode_image(std::span<const uint8_t> bytes, const std::string& name, int64_t max_pixels) {
  if (bytes.empty()) fail(ErrorKind::kIo, "image " + name + ": the file is empty");
  Decoded decoded;
  if (starts_with(bytes, 0, "\xFF\xD8\xFF", 3)) decoded = decode_jpeg(bytes, name, max_pixels);
  else if (starts_with(bytes, 0, "\x89PNG\r\n\x1A\n", 8)) decoded = decode_png(bytes, name, max_pixels);
  else if (starts_with(bytes, 0, "RIFF", 4) && starts_with(bytes, 8, "WEBP", 4))
    decoded = decode_webp(bytes, name, max_pixels);
  else if (starts_with(bytes, 0, "GIF8", 4) || starts_with(bytes, 0, "BM", 2) || starts_with(bytes, 0, "II*", 3) ||
           starts_with(bytes, 0, "MM\0*", 4))
    fail(ErrorKind::kIo, "image " + name + ": GIF, BMP and TIFF are not supported (JPEG, PNG and WebP are)");
  else
    fail(ErrorKind::kIo, "image " + name + ": not a JPEG, PNG or WebP file");
  return apply_exif_orientation(decoded.image, exif_orientation(decoded.exif));
}

RgbImage load_image(const std::string& path, int64_t max_pixels) {
  // A folder, FIFO or device is refused by name before any read.
  std::string bytes;
  try {
    bytes = read_text_file(path);
  } catch (const Error& e) {
    fail(e.kind(), "image " + std::string(e.what()));
  }
  return decode_image({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, path, max_pixels);
}

}  // namespace canrun
