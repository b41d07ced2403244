#include "vision/resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "util/error.h"

namespace canrun {

namespace {

double bilinear_filter(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Keys' cubic convolution with a = -0.5, as PIL and torch, in torch's order of operations.
double bicubic_filter(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= std::numbers::pi;
  return std::sin(x) / x;
}

double lanczos_filter(double x) { return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0; }

// One axis of the separable resize: for each output index, the first input index, how many
// inputs it reads, and their int16 weights (shared precision for the whole axis).
struct AxisWeights {
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int16_t> weights;  // output index * span + tap
  int span = 0;
  int precision = 0;
};

AxisWeights axis_weights(int input_size, int output_size, Resampling filter) {
  double (*kernel)(double) = filter == Resampling::kBilinear  ? bilinear_filter
                             : filter == Resampling::kBicubic ? bicubic_filter
                                                              : lanczos_filter;
  const double interp_size = filter == Resampling::kBilinear ? 2 : filter == Resampling::kBicubic ? 4 : 6;
  const double scale = static_cast<double>(input_size) / output_size;
  const double support = scale >= 1.0 ? interp_size * 0.5 * scale : interp_size * 0.5;
  const double inverse_scale = scale >= 1.0 ? 1.0 / scale : 1.0;

  AxisWeights axis;
  axis.span = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis.first.resize(output_size);
  axis.count.resize(output_size);
  std::vector<double> weights(static_cast<size_t>(output_size) * axis.span, 0.0);
  double largest = 0.0;
  for (int out = 0; out < output_size; ++out) {
    const double center = scale * (out + 0.5);
    const int64_t first = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t count = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), input_size) - first;
    count = std::clamp<int64_t>(count, 0, axis.span);
    double* row = weights.data() + static_cast<size_t>(out) * axis.span;
    double total = 0.0;
    for (int64_t tap = 0; tap < count; ++tap) {
      row[tap] = kernel((static_cast<double>(tap + first) - center + 0.5) * inverse_scale);
      total += row[tap];
    }
    if (total != 0.0)
      for (int64_t tap = 0; tap < count; ++tap) {
        row[tap] /= total;
        largest = std::max(largest, row[tap]);
      }
    axis.first[out] = static_cast<int>(first);
    axis.count[out] = static_cast<int>(count);
  }
  // torch's rule: the most bits (up to 22) for which the largest weight still fits in int16.
  for (axis.precision = 0; axis.precision < 22; ++axis.precision)
    if (static_cast<int>(0.5 + largest * (1 << (axis.precision + 1))) >= (1 << 15)) break;
  axis.weights.resize(weights.size());
  for (size_t index = 0; index < weights.size(); ++index) {
    const double value = weights[index] * (1 << axis.precision);
    axis.weights[index] = static_cast<int16_t>(value < 0 ? value - 0.5 : value + 0.5);
  }
  return axis;
}

uint8_t fixed_point_to_u8(int64_t sum, int precision) {
  return static_cast<uint8_t>(std::clamp<int64_t>(sum >> precision, 0, 255));
}

RgbImage resize_horizontal(const RgbImage& image, int width, Resampling filter) {
  const AxisWeights axis = axis_weights(image.width, width, filter);
  RgbImage out(width, image.height);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < width; ++x) {
      const int16_t* weights = axis.weights.data() + static_cast<size_t>(x) * axis.span;
      for (int channel = 0; channel < 3; ++channel) {
        int64_t sum = int64_t{1} << (axis.precision - 1);
        for (int tap = 0; tap < axis.count[x]; ++tap)
          sum += image.at(axis.first[x] + tap, y)[channel] * weights[tap];
        out.at(x, y)[channel] = fixed_point_to_u8(sum, axis.precision);
      }
    }
  return out;
}

RgbImage resize_vertical(const RgbImage& image, int height, Resampling filter) {
  const AxisWeights axis = axis_weights(image.height, height, filter);
  RgbImage out(image.width, height);
  for (int y = 0; y < height; ++y) {
    const int16_t* weights = axis.weights.data() + static_cast<size_t>(y) * axis.span;
    for (int x = 0; x < image.width; ++x)
      for (int channel = 0; channel < 3; ++channel) {
        int64_t sum = int64_t{1} << (axis.precision - 1);
        for (int tap = 0; tap < axis.count[y]; ++tap)
          sum += image.at(x, axis.first[y] + tap)[channel] * weights[tap];
        out.at(x, y)[channel] = fixed_point_to_u8(sum, axis.precision);
      }
  }
  return out;
}

// torch's "nearest": the input index floor(out * in / out_size) in float arithmetic.
RgbImage resize_nearest(const RgbImage& image, int width, int height) {
  const float x_scale = static_cast<float>(image.width) / width;
  const float y_scale = static_cast<float>(image.height) / height;
  RgbImage out(width, height);
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(static_cast<int>(std::floor(y * y_scale)), image.height - 1);
    for (int x = 0; x < width; ++x) {
      const int sx = std::min(static_cast<int>(std::floor(x * x_scale)), image.width - 1);
      std::copy_n(image.at(sx, sy), 3, out.at(x, y));
    }
  }
  return out;
}

}  // namespace

Resampling resampling_from_pil(int value, const std::string& field) {
  switch (value) {
    case 0: return Resampling::kNearest;
    case 1: return Resampling::kLanczos;
    case 2: return Resampling::kBilinear;
    case 3: return Resampling::kBicubic;
    default:
      fail(ErrorKind::kUnsupportedOption,
           field + " = " + std::to_string(value) +
               " is not supported (0 nearest, 1 lanczos, 2 bilinear and 3 bicubic are; 4 box and 5 hamming are not)");
  }
}

RgbImage resize_image(const RgbImage& image, int width, int height, Resampling filter) {
  if (width == image.width && height == image.height) return image;
  if (filter == Resampling::kNearest) return resize_nearest(image, width, height);
  const RgbImage wide = width == image.width ? image : resize_horizontal(image, width, filter);
  return height == image.height ? wide : resize_vertical(wide, height, filter);
}

}  // namespace canrun
