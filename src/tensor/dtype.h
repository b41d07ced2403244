// Element types canrun reads from checkpoints (and keeps its KV cache in), their widening to
// f32 and f32's rounding to them. kF8E4M3, kI8 and kI4 are weight formats only: their values
// mean nothing without their block scales (tensor/fp8.h, tensor/packed_int.h), so parse_dtype
// does not return them and the widening and rounding below do not take them. kI4 is two
// values a byte, the first in the low nibble, each stored as value + 8 (compressed-tensors'
// packing); dtype_size gives it 1, a byte holding two.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace canrun {

enum class DType { kF32, kBF16, kF16, kF8E4M3, kI8, kI4 };

// Bytes of weights with a float scale per row and block of inputs (WeightMatrix's FP8, int8
// and int4).
inline bool is_scaled_bytes(DType dtype) {
  return dtype == DType::kF8E4M3 || dtype == DType::kI8 || dtype == DType::kI4;
}
// Bytes holding `count` consecutive weights of a scaled-byte dtype.
inline int64_t scaled_bytes_for(DType dtype, int64_t count) { return dtype == DType::kI4 ? (count + 1) / 2 : count; }

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // safetensors spelling: "F32", "BF16", "F16", "F8_E4M3", "I8", "I4"
std::optional<DType> parse_dtype(std::string_view safetensors_name);

// Inline: ref's products widen every bf16 weight as they read it.
inline float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
float f16_to_f32(uint16_t bits);
// Round to nearest even, as torch's .to(bfloat16) / .to(float16) do; NaN stays NaN, f16
// overflows to infinity.
uint16_t f32_to_bf16(float value);
uint16_t f32_to_f16(float value);

// Widens `count` elements stored as `dtype` at `src` (any alignment) into `dst`.
void widen_to_f32(DType dtype, const std::byte* src, size_t count, float* dst);
// Rounds `count` f32 values into `dst` (any alignment) as `dtype`.
void narrow_from_f32(DType dtype, const float* src, size_t count, std::byte* dst);

}  // namespace canrun
