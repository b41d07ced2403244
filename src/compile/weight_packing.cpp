#include "compile/weight_packing.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tensor/packed_int.h"

namespace canrun {
namespace {

// Panels [first, end) of the matrix.
template <typename From, typename To = From, typename Convert = To (*)(From)>
void pack(const From* rows_data, int64_t rows, int64_t cols, int64_t first, int64_t end, To* dst,
          Convert convert = [](From value) { return value; }) {
  constexpr int64_t width = WeightMatrix::kPanelWidth;
#pragma omp parallel for schedule(static)
  for (int64_t q = first; q < end; ++q) {
    To* panel = dst + q * width * cols;
    const int64_t filled = std::min(width, rows - q * width);
    if (filled < width) std::memset(static_cast<void*>(panel), 0, sizeof(To) * width * cols);
    for (int64_t j = 0; j < filled; ++j) {
      const From* row = rows_data + (q * width + j) * cols;
      for (int64_t k = 0; k < cols; ++k) panel[k * width + j] = convert(row[k]);
    }
  }
}

// Scaled bytes' scales behind the panels: for panel q and block b, the 16 rows' scales (zero for the
// padding rows), so a kernel loads them as one vector per block.
void pack_scales(const WeightMatrix& m, float* dst) {
  constexpr int64_t width = WeightMatrix::kPanelWidth;
  const int64_t blocks = m.scale_blocks();
  for (int64_t q = 0; q < m.panel_count(); ++q)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t j = 0; j < width; ++j) {
        const int64_t row = q * width + j;
        dst[(q * blocks + b) * width + j] = row < m.rows() ? m.byte_scales()[row * blocks + b] : 0.0f;
      }
}

// int4 panels [first, end): for each input, the panel's 16 nibbles in 8 bytes, row i low and
// i + 8 high, padding rows 0 (stored as 8).
void pack_int4(const WeightMatrix& m, int64_t first, int64_t end, uint8_t* dst) {
  constexpr int64_t width = WeightMatrix::kPanelWidth;
  const int64_t cols = m.cols(), row_bytes = scaled_bytes_for(DType::kI4, cols);
#pragma omp parallel for schedule(static)
  for (int64_t q = first; q < end; ++q) {
    uint8_t* panel = dst + q * width / 2 * cols;
    for (int64_t k = 0; k < cols; ++k)
      for (int64_t j = 0; j < width / 2; ++j) {
        const auto stored = [&](int64_t row) -> uint8_t {
          return row < m.rows() ? static_cast<uint8_t>(int4_value(m.byte_data() + row * row_bytes, k) + 8) : 8;
        };
        panel[k * width / 2 + j] = static_cast<uint8_t>(stored(q * width + j) | stored(q * width + j + width / 2) << 4);
      }
  }
}

}  // namespace

DType packed_dtype(const WeightMatrix& m, DType products) {
  return m.dtype() == DType::kF32 && products == DType::kBF16 ? DType::kBF16 : m.dtype();
}

void pack_panel_range(const WeightMatrix& m, int64_t first, int64_t end, std::byte* dst, DType products) {
  if (m.dtype() == DType::kF32 && packed_dtype(m, products) == DType::kBF16)
    pack(m.f32_data(), m.rows(), m.cols(), first, end, reinterpret_cast<uint16_t*>(dst), f32_to_bf16);
  else if (m.dtype() == DType::kI4)
    pack_int4(m, first, end, reinterpret_cast<uint8_t*>(dst));
  else if (is_scaled_bytes(m.dtype()))
    pack(m.byte_data(), m.rows(), m.cols(), first, end, reinterpret_cast<uint8_t*>(dst));
  else if (m.dtype() == DType::kBF16)
    pack(m.bf16_data(), m.rows(), m.cols(), first, end, reinterpret_cast<uint16_t*>(dst));
  else
    pack(m.f32_data(), m.rows(), m.cols(), first, end, reinterpret_cast<float*>(dst));
  if (is_scaled_bytes(m.dtype()) && end == m.panel_count())
    pack_scales(m, reinterpret_cast<float*>(dst + WeightMatrix::panel_scales_offset(m.dtype(), m.rows(), m.cols())));
}

void pack_panels(const WeightMatrix& m, std::byte* dst, DType products) {
  pack_panel_range(m, 0, m.panel_count(), dst, products);
}

}  // namespace canrun
