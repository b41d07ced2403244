// MXFP4 (OCP microscaling FP4), as gpt-oss publishes its expert weights: each row's values in
// blocks of 32, two E2M1 values per byte (low nibble first), one E8M0 scale byte (2^(s-127))
// per block. Dequantised values are exact in f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace canrun {

// blocks: rows x (cols / 2) bytes; scales: rows x (cols / 32) bytes. Returns rows x cols floats.
std::vector<float> dequantize_mxfp4(const std::byte* blocks, const std::byte* scales, int64_t rows, int64_t cols);

}  // namespace canrun
