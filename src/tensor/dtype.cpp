#include "tensor/dtype.h"

#include <bit>
#include <cstring>

namespace canrun {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kBF16:
    case DType::kF16: return 2;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kBF16: return "BF16";
    case DType::kF16: return "F16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "BF16") return DType::kBF16;
  if (name == "F16") return DType::kF16;
  return std::nullopt;
}

float bf16_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
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
  // GCC's _Float16 conversion rounds to nearest even (F16C's vcvtps2ph where enabled).
  return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

void widen_to_f32(DType dtype, const std::byte* src, size_t count, float* dst) {
  if (count == 0) return;  // an empty slice (a worker without heads) may have no storage at all
  if (dtype == DType::kF32) {
    std::memcpy(dst, src, count * sizeof(float));
    return;
  }
  // Embedding tables run to hundreds of millions of values.
#pragma omp parallel for schedule(static) if (count > (1 << 20))
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    dst[i] = dtype == DType::kBF16 ? bf16_to_f32(bits) : f16_to_f32(bits);
  }
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
