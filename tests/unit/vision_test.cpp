// Image files and image processors against transformers 5.23.0: decoded pixels (load_image:
// EXIF orientation, PIL's RGB conversion) exactly, pixel_values within 1e-5, patch grids
// exactly. Goldens: tools/make_image_goldens.py (transformers 5.23.0, torchvision 0.29.2,
// Pillow 13.0.0) over the images it made in tests/fixtures/images.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/json.h"
#include "util/npy.h"
#include "util/temporary_directory.h"
#include "vision/exif_orientation.h"
#include "vision/image_loading.h"
#include "vision/image_processor.h"
#include "vision/resample.h"

namespace canrun {
namespace {

const std::filesystem::path kSource(CANRUN_SOURCE_DIR);
const std::filesystem::path kImages = kSource / "tests/fixtures/images";
const std::filesystem::path kGoldens = kSource / "tests/goldens/images";

std::string image_path(const std::string& name) { return (kImages / name).string(); }

TEST(ImageLoading, EveryTestImageDecodesToPilsPixels) {
  const Json golden = read_json_file((kGoldens / "decoded.json").string(), ErrorKind::kIo);
  const NpyArray pixels = read_npy_f32((kGoldens / "decoded.npy").string());
  ASSERT_EQ(3, pixels.cols);
  size_t row = 0;
  for (size_t index = 0; index < golden["images"].size(); ++index) {
    const std::string name = golden["images"][index];
    const RgbImage image = load_image(image_path(name));
    EXPECT_EQ(golden["image_sizes"][index][0].get<int>(), image.width) << name;
    EXPECT_EQ(golden["image_sizes"][index][1].get<int>(), image.height) << name;
    int differing = 0, largest = 0;
    for (size_t value = 0; value < image.pixels.size(); ++value) {
      const int difference = std::abs(image.pixels[value] - static_cast<int>(pixels.values[row * 3 + value]));
      differing += difference != 0;
      largest = std::max(largest, difference);
    }
    EXPECT_EQ(0, differing) << name << ": " << differing << " values differ, by up to " << largest;
    row += image.pixels.size() / 3;
  }
  EXPECT_EQ(static_cast<size_t>(pixels.rows), row);
}

class ProcessorParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ProcessorParity, PixelValuesAndGridsMatchTransformers) {
  const std::string name = GetParam();
  const Json golden = read_json_file((kGoldens / (name + ".json")).string(), ErrorKind::kIo);
  const NpyArray expected = read_npy_f32((kGoldens / (name + ".npy")).string());
  const ImageProcessorConfig config =
      read_image_processor_config((kSource / "tests/fixtures/image_processors" / name).string());
  EXPECT_EQ(golden["processor_class"].get<std::string>(), config.class_name);
  std::vector<RgbImage> images;
  for (const Json& image : golden["images"]) images.push_back(load_image(image_path(image.get<std::string>())));
  const PixelValues pixels = preprocess_images(config, images);
  ASSERT_EQ(expected.rows, pixels.rows);
  ASSERT_EQ(expected.cols, pixels.cols);
  if (golden.contains("image_grid_thw")) {
    ASSERT_EQ(golden["image_grid_thw"].size(), pixels.grid_thw.size());
    for (size_t index = 0; index < pixels.grid_thw.size(); ++index)
      for (int axis = 0; axis < 3; ++axis)
        EXPECT_EQ(golden["image_grid_thw"][index][axis].get<int64_t>(), pixels.grid_thw[index][axis]) << index;
  }
  if (golden.contains("tile_rows_cols")) {
    ASSERT_EQ(golden["tile_rows_cols"].size(), pixels.tile_rows_cols.size());
    for (size_t index = 0; index < pixels.tile_rows_cols.size(); ++index)
      EXPECT_EQ(golden["tile_rows_cols"][index].get<std::vector<int64_t>>(),
                std::vector<int64_t>(pixels.tile_rows_cols[index].begin(), pixels.tile_rows_cols[index].end()));
  }
  if (golden.contains("image_position_ids")) {
    ASSERT_EQ(golden["image_position_ids"].size(), pixels.patch_positions.size());
    for (size_t index = 0; index < pixels.patch_positions.size(); ++index)
      ASSERT_EQ(golden["image_position_ids"][index].get<std::vector<int64_t>>(),
                std::vector<int64_t>(pixels.patch_positions[index].begin(), pixels.patch_positions[index].end()))
          << "row " << index;
    EXPECT_EQ(golden["num_soft_tokens_per_image"].get<std::vector<int64_t>>(), pixels.num_soft_tokens);
  }
  if (golden.contains("aspect_ratio_ids")) {
    EXPECT_EQ(golden["aspect_ratio_ids"].get<std::vector<int64_t>>(), pixels.aspect_ratio_ids);
    std::vector<int64_t> num_tiles;
    for (const auto& [rows, cols] : pixels.tile_rows_cols) num_tiles.push_back(rows * cols);
    EXPECT_EQ(golden["num_tiles"].get<std::vector<int64_t>>(), num_tiles);
  }
  if (golden.contains("num_crops"))
    EXPECT_EQ(golden["num_crops"].get<std::vector<int64_t>>(), pixels.num_crops);
  double largest = 0.0;
  for (size_t index = 0; index < pixels.values.size(); ++index)
    largest = std::max(largest, static_cast<double>(std::abs(pixels.values[index] - expected.values[index])));
  EXPECT_LE(largest, 1e-5) << name;
  std::printf("%s: pixel_values max |difference| %.3g over %zu values\n", name.c_str(), largest,
              pixels.values.size());
}

INSTANTIATE_TEST_SUITE_P(Goldens, ProcessorParity,
                         ::testing::Values("qwen2_vl", "qwen3_vl", "siglip", "siglip_bicubic", "siglip_lanczos", "clip",
                                           "gemma3", "gemma3_pan_and_scan", "idefics3", "gemma4", "llama4", "mllama"));

TEST(SmartResize, FollowsTransformersRounding) {
  // round() of 2.5 is 2 in Python (half to even): 70/28 = 2.5 -> 56, 98/28 = 3.5 -> 112.
  EXPECT_EQ(std::make_pair(56, 112), smart_resize(70, 98, 28, 56 * 56, 28 * 28 * 1280));
  // Too few pixels: scaled up, rounded up to the factor.
  EXPECT_EQ(std::make_pair(84, 56), smart_resize(53, 37, 28, 56 * 56, 28 * 28 * 4));
  // Too many: scaled down, rounded down, never below one factor.
  EXPECT_EQ(std::make_pair(28, 1960), smart_resize(30, 5000, 28, 56 * 56, 28 * 28 * 30));
  try {
    smart_resize(1, 201, 28, 56 * 56, 28 * 28 * 1280);
    ADD_FAILURE() << "an aspect ratio of 201 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("aspect ratio above 200")) << e.what();
  }
}

std::vector<uint8_t> tiff_with_orientation(bool little_endian, uint16_t orientation) {
  auto u16 = [&](uint16_t v) {
    return little_endian ? std::vector<uint8_t>{uint8_t(v), uint8_t(v >> 8)}
                         : std::vector<uint8_t>{uint8_t(v >> 8), uint8_t(v)};
  };
  std::vector<uint8_t> blob = {'E', 'x', 'i', 'f', 0, 0};
  auto append = [&](const std::vector<uint8_t>& bytes) { blob.insert(blob.end(), bytes.begin(), bytes.end()); };
  append(little_endian ? std::vector<uint8_t>{'I', 'I'} : std::vector<uint8_t>{'M', 'M'});
  append(u16(42));
  append(little_endian ? std::vector<uint8_t>{8, 0, 0, 0} : std::vector<uint8_t>{0, 0, 0, 8});
  append(u16(1));       // one entry
  append(u16(0x0112));  // orientation
  append(u16(3));       // SHORT
  append(little_endian ? std::vector<uint8_t>{1, 0, 0, 0} : std::vector<uint8_t>{0, 0, 0, 1});
  append(u16(orientation));
  append({0, 0});
  return blob;
}

TEST(ExifOrientation, ReadsBothByteOrdersAndIgnoresWhatIsBroken) {
  EXPECT_EQ(6, exif_orientation(tiff_with_orientation(true, 6)));
  EXPECT_EQ(8, exif_orientation(tiff_with_orientation(false, 8)));
  EXPECT_EQ(1, exif_orientation(tiff_with_orientation(true, 9)));
  std::vector<uint8_t> cut = tiff_with_orientation(true, 6);
  cut.resize(cut.size() - 6);
  EXPECT_EQ(1, exif_orientation(cut));
  EXPECT_EQ(1, exif_orientation(std::vector<uint8_t>{}));
}

TEST(ExifOrientation, TurnsAsPilDoes) {
  RgbImage image(3, 2);  // pixel (x, y) has red = 10 * y + x
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) image.at(x, y)[0] = static_cast<uint8_t>(10 * y + x);
  const RgbImage clockwise = apply_exif_orientation(image, 6);
  ASSERT_EQ(2, clockwise.width);
  ASSERT_EQ(3, clockwise.height);
  EXPECT_EQ(10, clockwise.at(0, 0)[0]);  // the bottom-left corner comes to the top left
  EXPECT_EQ(0, clockwise.at(1, 0)[0]);
  EXPECT_EQ(2, apply_exif_orientation(image, 2).at(0, 0)[0]);
  EXPECT_EQ(12, apply_exif_orientation(image, 3).at(0, 0)[0]);
}

void expect_load_error(const std::string& path, ErrorKind kind, const std::string& fragment,
                       int64_t max_pixels = kDefaultMaxImagePixels) {
  try {
    load_image(path, max_pixels);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_EQ(error_kind_name(kind), error_kind_name(e.kind())) << e.what();
    const std::string message = e.what();
    EXPECT_NE(std::string::npos, message.find(path)) << message;
    EXPECT_NE(std::string::npos, message.find(fragment)) << message;
  }
}

TEST(ImageLoading, BadFilesAreNamedWithWhatIsWrong) {
  expect_load_error(image_path("bad_empty.png"), ErrorKind::kIo, "the file is empty");
  expect_load_error(image_path("bad_truncated.jpg"), ErrorKind::kIo, "Premature end of JPEG file");
  expect_load_error(image_path("bad_text.jpg"), ErrorKind::kIo, "not a JPEG, PNG or WebP file");
  expect_load_error(image_path("bad_unsupported.gif"), ErrorKind::kIo, "GIF, BMP and TIFF are not supported");
  expect_load_error(image_path("no_such_image.png"), ErrorKind::kIo, "cannot open");
  expect_load_error(image_path(""), ErrorKind::kIo, "not a regular file");
  expect_load_error(image_path("rgb_37x53.jpg"), ErrorKind::kUsage, "above the cap of 1000", 1000);
  // Every cut of a PNG and a WebP is refused, never decoded into garbage.
  for (const std::string name : {"rgba_61x23.png", "lossy_41x27.webp", "lossless_rgba_41x27.webp"}) {
    std::ifstream file(image_path(name), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (size_t size : {size_t{8}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
      const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
      EXPECT_THROW(decode_image(cut, name), Error) << name << " cut to " << size << " bytes";
    }
  }
}

void expect_config_error(const std::string& json, ErrorKind kind, const std::string& fragment) {
  TemporaryDirectory folder("canrun-processor");
  std::ofstream(folder.path() / "preprocessor_config.json") << json;
  try {
    read_image_processor_config(folder.path().string());
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    EXPECT_EQ(error_kind_name(kind), error_kind_name(e.kind())) << e.what();
    const std::string message = e.what();
    EXPECT_NE(std::string::npos, message.find("preprocessor_config.json")) << message;
    EXPECT_NE(std::string::npos, message.find(fragment)) << message;
  }
}

TEST(ImageProcessorConfig, BadOrUnsupportedFieldsAreNamed) {
  expect_config_error(R"({"image_processor_type": "PixtralImageProcessor"})", ErrorKind::kUnsupportedOption,
                      "\"PixtralImageProcessor\" is not supported");
  expect_config_error(R"({"image_processor_type": "Gemma4ImageProcessor", "max_soft_tokens": 100})",
                      ErrorKind::kCheckpoint, "max_soft_tokens must be one of 70, 140, 280, 560 and 1120");
  expect_config_error(R"({"image_processor_type": "MllamaImageProcessor", "size": {"height": 8, "width": 9}})",
                      ErrorKind::kCheckpoint, "size must be square for MllamaImageProcessor");
  expect_config_error(R"({"image_processor_type": "Llama4ImageProcessor", "do_resize": false})",
                      ErrorKind::kUnsupportedOption, "do_resize = false is not supported by Llama4ImageProcessor");
  expect_config_error(R"({"image_processor_type": "Idefics3ImageProcessor", "max_image_size": 364})",
                      ErrorKind::kCheckpoint, "max_image_size must be {\"longest_edge\": N}");
  expect_config_error(R"({"image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 0})",
                      ErrorKind::kCheckpoint, "patch_size must be a positive whole number");
  expect_config_error(R"({"image_processor_type": "SiglipImageProcessor", "image_mean": [0.5, 0.5]})",
                      ErrorKind::kCheckpoint, "image_mean must be a number or a list of 3 numbers");
  expect_config_error(R"({"image_processor_type": "SiglipImageProcessor", "resample": 4})",
                      ErrorKind::kUnsupportedOption, "resample = 4 is not supported");
  expect_config_error(R"({"image_processor_type": "Gemma3ImageProcessor", "do_pan_and_scan": true})",
                      ErrorKind::kCheckpoint, "pan_and_scan_min_crop_size must be a number when do_pan_and_scan");
  expect_config_error(R"({"image_processor_type": "SiglipImageProcessor", "size": {"longest_edge": 224}})",
                      ErrorKind::kUnsupportedOption, "size {\"longest_edge\":224} is not supported");
  TemporaryDirectory empty("canrun-processor");
  EXPECT_THROW(read_image_processor_config(empty.path().string()), Error);
}

TEST(ImageProcessorConfig, ProcessorConfigJsonIsReadToo) {
  TemporaryDirectory folder("canrun-processor");
  std::ofstream(folder.path() / "processor_config.json")
      << R"({"image_processor": {"image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 16,
            "size": {"shortest_edge": 1024, "longest_edge": 4096}}, "processor_class": "Qwen3VLProcessor"})";
  const ImageProcessorConfig config = read_image_processor_config(folder.path().string());
  EXPECT_EQ(ImageProcessorKind::kQwen2Vl, config.kind);
  EXPECT_EQ(16, config.patch_size);
  EXPECT_EQ(1024, config.min_pixels);
  EXPECT_EQ(4096, config.max_pixels);
  EXPECT_EQ(Resampling::kBicubic, config.resample);
}

}  // namespace
}  // namespace canrun
