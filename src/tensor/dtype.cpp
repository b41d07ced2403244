#include "tensor/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace canrun {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kBF16:
    case DType::kF16: return 2;
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI4: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kBF16: return "BF16";
    case DType::kF16: return "F16";
    case DType::kF8E4M3: return "F8_E4M3";
    case DType::kI8: return "I8";
    case DType::kI4: return "I4";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "BF16") return DType::kBF16;
  if (name == "F16") return DType::kF16;
  return std::nullopt;
}

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {  // inf or nan
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: value = mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00;   // NaN, quiet
  if (magnitude >= 0x477ff000u) return sign | 0x7c00;  // 65520 and up (the tie above 65504 included): infinity
  if (magnitude >= 0x38800000u) {                      // 2^-14 and up: normal
    uint32_t rebiased = magnitude - 0x38000000u;       // exponent bias 127 -> 15
    rebiased += 0xfff + ((rebiased >> 13) & 1);        // round 23 mantissa bits to 10, to nearest even
    return sign | static_cast<uint16_t>(rebiased >> 13);
  }
  // Subnormal: the count of 2^-24 steps, rounded to nearest even (1024 is the smallest normal).
  return sign | static_cast<uint16_t>(std::nearbyint(std::bit_cast<float>(magnitude) * 0x1p24f));
}

void widen_to_f32(DType dtype, const std::byte* src, size_t count, float* dst) {
  if (count == 0) return;  // an empty slice (a worker without heads) may have no storage at all
  if (dtype == DType::kF32) {
    std::memcpy(dst, src, count * sizeof(float));
    return;
  }
  const auto widen = [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      uint16_t bits;
      std::memcpy(&bits, src + 2 * i, 2);
      dst[i] = dtype == DType::kBF16 ? bf16_to_f32(bits) : f16_to_f32(bits);
    }
  };
  // Embedding tables run to hundreds of millions of values; a row of a matrix (ref widens one
  // at a time, from its own threads) is widened where it is, without a thread team.
  constexpr size_t kParallelCount = size_t{1} << 20;
  if (count <= kParallelCount) return widen(0, count);
  const size_t chunks = (count + kParallelCount - 1) / kParallelCount;
#pragma omp parallel for schedule(static)
  for (size_t chunk = 0; chunk < chunks; ++chunk)
    widen(chunk * kParallelCount, std::min(count, (chunk + 1) * kParallelCount));
}

void narrow_from_f32(DType dtype, const float* src, size_t count, std::byte* dst) {
  if (dtype == DType::kF32) {
    std::memcpy(dst, src, count * sizeof(float));
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint16_t bits = dtype == DType::kBF16 ? f32_to_bf16(src[i]) : f32_to_f16(src[i]);
    std::memcpy(dst + 2 * i, &bits, 2);
  }
}

}  // namespace canrun
