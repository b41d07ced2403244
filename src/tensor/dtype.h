// Element types canrun reads from checkpoints, and their widening to f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace canrun {

enum class DType { kF32, kBF16, kF16 };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // safetensors spelling: "F32", "BF16", "F16"
std::optional<DType> parse_dtype(std::string_view safetensors_name);

float bf16_to_f32(uint16_t bits);
float f16_to_f32(uint16_t bits);

// Widens `count` elements stored as `dtype` at `src` (any alignment) into `dst`.
void widen_to_f32(DType dtype, const std::byte* src, size_t count, float* dst);

}  // namespace canrun
