#include "tensor/weight_matrix.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <string>
#include <utility>

#include "tensor/fp8.h"
#include "tensor/packed_int.h"
#include "util/error.h"

namespace canrun {
namespace {

// The elements of `m` as a flat span of T (float or uint16_t, per its dtype).
template <typename T>
std::span<const T> elements(const WeightMatrix& m) {
  const size_t count = static_cast<size_t>(m.rows() * m.cols());
  if constexpr (std::is_same_v<T, float>)
    return {m.f32_data(), count};
  else
    return {m.bf16_data(), count};
}

template <typename T>
WeightMatrix make(std::vector<T> values, int64_t rows, int64_t cols) {
  if constexpr (std::is_same_v<T, float>)
    return WeightMatrix::f32(FloatBuffer::owning(std::move(values)), rows, cols);
  else
    return WeightMatrix::bf16_owning(std::move(values), rows, cols);
}

template <typename T>
WeightMatrix transposed_of(const WeightMatrix& m) {
  const std::span<const T> all = elements<T>(m);
  std::vector<T> out(all.size());
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); ++c) out[c * m.rows() + r] = all[r * m.cols() + c];
  return make(std::move(out), m.cols(), m.rows());
}

template <typename T>
WeightMatrix stack_of(std::span<const WeightMatrix> parts) {
  std::vector<T> out;
  int64_t rows = 0;
  for (const WeightMatrix& part : parts) {
    const std::span<const T> all = elements<T>(part);
    out.insert(out.end(), all.begin(), all.end());
    rows += part.rows();
  }
  return make(std::move(out), rows, parts.empty() ? 0 : parts.front().cols());
}

WeightMatrix scaled_bytes_stack_of(std::span<const WeightMatrix> parts) {
  std::vector<uint8_t> values;
  std::vector<float> scales;
  int64_t rows = 0;
  for (const WeightMatrix& part : parts) {
    if (part.dtype() != parts.front().dtype() || part.block_cols() != parts.front().block_cols())
      fail(ErrorKind::kRuntime, "stack: a scaled-byte part with another dtype or other scale blocks");
    values.insert(values.end(), part.byte_data(),
                  part.byte_data() + part.rows() * scaled_bytes_for(part.dtype(), part.cols()));
    scales.insert(scales.end(), part.byte_scales(), part.byte_scales() + part.rows() * part.scale_blocks());
    rows += part.rows();
  }
  const WeightMatrix& first = parts.front();
  return WeightMatrix::scaled_bytes_owning(first.dtype(), std::move(values), FloatBuffer::owning(std::move(scales)),
                                           first.block_cols(), rows, first.cols());
}

}  // namespace

std::span<const std::byte> WeightMatrix::row_bytes() const {
  if (layout_ != MatrixLayout::kRows || empty()) return {};
  const size_t count = static_cast<size_t>(rows_ * cols_);
  if (dtype_ == DType::kBF16) return std::as_bytes(std::span<const uint16_t>(bf16_, count));
  if (is_scaled_bytes(dtype_))
    return std::as_bytes(std::span<const uint8_t>(bytes_, static_cast<size_t>(rows_ * scaled_bytes_for(dtype_, cols_))));
  return std::as_bytes(std::span<const float>(f32_.data(), count));
}

WeightMatrix WeightMatrix::f32(FloatBuffer values, int64_t rows, int64_t cols) {
  WeightMatrix m;
  m.dtype_ = DType::kF32;
  m.rows_ = rows;
  m.cols_ = cols;
  m.f32_ = std::move(values);
  return m;
}

WeightMatrix WeightMatrix::bf16_owning(std::vector<uint16_t> values, int64_t rows, int64_t cols) {
  WeightMatrix m;
  m.dtype_ = DType::kBF16;
  m.rows_ = rows;
  m.cols_ = cols;
  m.bf16_owned_ = std::move(values);
  m.bf16_ = m.bf16_owned_.data();
  return m;
}

WeightMatrix WeightMatrix::bf16_borrowing(const uint16_t* data, int64_t rows, int64_t cols) {
  WeightMatrix m;
  m.dtype_ = DType::kBF16;
  m.rows_ = rows;
  m.cols_ = cols;
  m.bf16_ = data;
  return m;
}

WeightMatrix WeightMatrix::scaled_bytes_owning(DType dtype, std::vector<uint8_t> values, FloatBuffer scales,
                                               int64_t block_cols, int64_t rows, int64_t cols) {
  WeightMatrix m = scaled_bytes_borrowing(dtype, values.data(), std::move(scales), block_cols, rows, cols);
  m.bytes_owned_ = std::move(values);  // a moved vector keeps its buffer, so bytes_ stays valid
  return m;
}

WeightMatrix WeightMatrix::scaled_bytes_borrowing(DType dtype, const uint8_t* values, FloatBuffer scales,
                                                  int64_t block_cols, int64_t rows, int64_t cols) {
  WeightMatrix m;
  m.dtype_ = dtype;
  m.rows_ = rows;
  m.cols_ = cols;
  m.bytes_ = values;
  m.scales_ = std::move(scales);
  m.block_cols_ = block_cols;
  return m;
}

WeightMatrix WeightMatrix::panels_borrowing(DType dtype, const void* data, int64_t rows, int64_t cols,
                                            int64_t block_cols) {
  WeightMatrix m;
  m.dtype_ = dtype;
  m.layout_ = MatrixLayout::kPanels;
  m.rows_ = rows;
  m.cols_ = cols;
  m.panels_ = data;
  m.block_cols_ = block_cols;
  return m;
}

int64_t WeightMatrix::panel_bytes(DType dtype, int64_t rows, int64_t cols, int64_t block_cols) {
  const int64_t padded_rows = (rows + kPanelWidth - 1) / kPanelWidth * kPanelWidth;
  if (!is_scaled_bytes(dtype)) return padded_rows * cols * static_cast<int64_t>(dtype_size(dtype));
  const int64_t blocks = (cols + block_cols - 1) / block_cols;
  return panel_scales_offset(dtype, rows, cols) + padded_rows * blocks * static_cast<int64_t>(sizeof(float));
}

int64_t WeightMatrix::panel_scales_offset(DType dtype, int64_t rows, int64_t cols) {
  const int64_t value_bytes = scaled_bytes_for(dtype, (rows + kPanelWidth - 1) / kPanelWidth * kPanelWidth * cols);
  return (value_bytes + 63) / 64 * 64;
}

const float* WeightMatrix::panel_scales() const {
  return reinterpret_cast<const float*>(static_cast<const std::byte*>(panels_) +
                                        panel_scales_offset(dtype_, rows_, cols_));
}

WeightMatrix& WeightMatrix::operator=(WeightMatrix&& other) noexcept {
  dtype_ = other.dtype_;
  layout_ = std::exchange(other.layout_, MatrixLayout::kRows);
  rows_ = std::exchange(other.rows_, 0);
  cols_ = std::exchange(other.cols_, 0);
  f32_ = std::move(other.f32_);
  bf16_owned_ = std::move(other.bf16_owned_);  // a moved vector keeps its buffer, so bf16_ stays valid
  bf16_ = std::exchange(other.bf16_, nullptr);
  bytes_owned_ = std::move(other.bytes_owned_);
  bytes_ = std::exchange(other.bytes_, nullptr);
  scales_ = std::move(other.scales_);
  block_cols_ = std::exchange(other.block_cols_, 0);
  panels_ = std::exchange(other.panels_, nullptr);
  return *this;
}

void WeightMatrix::require_rows(const char* operation) const {
  if (layout_ != MatrixLayout::kRows)
    fail(ErrorKind::kRuntime, std::string(operation) + " needs a row-major weight matrix, not packed panels");
}

WeightMatrix WeightMatrix::view() const {
  require_rows("view");
  if (dtype_ == DType::kF32)
    return f32(FloatBuffer::borrowing(f32_.data(), static_cast<size_t>(rows_ * cols_)), rows_, cols_);
  if (is_scaled_bytes(dtype_))
    return scaled_bytes_borrowing(dtype_, bytes_, FloatBuffer::borrowing(scales_.data(), scales_.size()), block_cols_,
                                  rows_, cols_);
  return bf16_borrowing(bf16_, rows_, cols_);
}

void WeightMatrix::copy_row(int64_t row, float* out) const {
  require_rows("copy_row");
  if (dtype_ == DType::kF32) {
    std::copy_n(f32_.data() + row * cols_, cols_, out);
    return;
  }
  if (dtype_ == DType::kF8E4M3) {
    dequantize_fp8_row(bytes_ + row * cols_, scales_.data() + row * scale_blocks(), block_cols_, cols_, out);
    return;
  }
  if (dtype_ == DType::kI8) {
    dequantize_int8_row(reinterpret_cast<const int8_t*>(bytes_) + row * cols_, scales_.data() + row * scale_blocks(),
                        block_cols_, cols_, out);
    return;
  }
  if (dtype_ == DType::kI4) {
    dequantize_int4_row(bytes_ + row * scaled_bytes_for(dtype_, cols_), scales_.data() + row * scale_blocks(),
                        block_cols_, cols_, out);
    return;
  }
  widen_to_f32(DType::kBF16, reinterpret_cast<const std::byte*>(bf16_ + row * cols_), static_cast<size_t>(cols_), out);
}

WeightMatrix WeightMatrix::slice_rows(int64_t first, int64_t count) const {
  require_rows("slice_rows");
  const int64_t offset = first * cols_, size = count * cols_;
  if (is_scaled_bytes(dtype_)) {
    const int64_t blocks = scale_blocks(), row_bytes = scaled_bytes_for(dtype_, cols_);
    FloatBuffer scales = scales_.borrowed()
                             ? FloatBuffer::borrowing(scales_.data() + first * blocks, static_cast<size_t>(count * blocks))
                             : FloatBuffer::owning(std::vector<float>(scales_.data() + first * blocks,
                                                                      scales_.data() + (first + count) * blocks));
    const uint8_t* part = bytes_ + first * row_bytes;
    if (bytes_owned_.empty()) return scaled_bytes_borrowing(dtype_, part, std::move(scales), block_cols_, count, cols_);
    return scaled_bytes_owning(dtype_, std::vector<uint8_t>(part, part + count * row_bytes), std::move(scales),
                               block_cols_, count, cols_);
  }
  if (dtype_ == DType::kF32) {
    if (f32_.borrowed())
      return f32(FloatBuffer::borrowing(f32_.data() + offset, static_cast<size_t>(size)), count, cols_);
    return f32(FloatBuffer::owning(std::vector<float>(f32_.data() + offset, f32_.data() + offset + size)), count,
               cols_);
  }
  if (bf16_owned_.empty()) return bf16_borrowing(bf16_ + offset, count, cols_);
  return bf16_owning(std::vector<uint16_t>(bf16_ + offset, bf16_ + offset + size), count, cols_);
}

WeightMatrix WeightMatrix::transposed() const {
  require_rows("transposed");
  if (is_scaled_bytes(dtype_))
    fail(ErrorKind::kRuntime, "transposed: a scaled-byte matrix keeps its checkpoint's layout");
  return dtype_ == DType::kF32 ? transposed_of<float>(*this) : transposed_of<uint16_t>(*this);
}

WeightMatrix WeightMatrix::stack(std::span<const WeightMatrix> parts) {
  for (const WeightMatrix& part : parts) part.require_rows("stack");
  if (!parts.empty() && is_scaled_bytes(parts.front().dtype())) return scaled_bytes_stack_of(parts);
  const bool f32 = parts.empty() || parts.front().dtype() == DType::kF32;
  return f32 ? stack_of<float>(parts) : stack_of<uint16_t>(parts);
}

}  // namespace canrun
