// The weight of a linear layer, [rows = out, cols = in], held as f32, bf16, FP8, int8 or int4.
// The `ref` backend widens every matrix to f32; `cpu` keeps bf16 checkpoints as bf16 and FP8,
// int8 and int4 ones as scaled bytes (E4M3, int8 or int4 values with a float scale per row and
// per block_cols() inputs: an FP8 checkpoint's weight_scale_inv repeated over the rows of its
// block, an int one's weight_scale), which halves, quarters or eighths the memory a model
// needs. A row of int4 takes (cols + 1) / 2 bytes (dtype.h). Owns its storage or borrows it
// from a memory mapping.
//
// Two layouts: row-major as loaded, and panels as the compile step packs them for the cpu
// backend's kernels: the rows in groups of kPanelWidth, each group stored column by column
// (for every input k, the group's kPanelWidth weights side by side), the last group padded
// with zero rows. A kernel then reads one contiguous stream per group and each loaded vector
// of weights serves several rows of input (int4: 8 bytes per input, row i in the low nibble
// and i + 8 in the high). Scaled-byte panels are followed, from the next 64-byte boundary, by
// their scales: for each panel and each block of inputs, its 16 rows' scales.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/float_buffer.h"

namespace canrun {

enum class MatrixLayout { kRows, kPanels };

class WeightMatrix {
 public:
  static constexpr int64_t kPanelWidth = 16;

  WeightMatrix() = default;
  static WeightMatrix f32(FloatBuffer values, int64_t rows, int64_t cols);
  static WeightMatrix bf16_owning(std::vector<uint16_t> values, int64_t rows, int64_t cols);
  // `data` must stay valid (a checkpoint mapping) and be 2-byte aligned.
  static WeightMatrix bf16_borrowing(const uint16_t* data, int64_t rows, int64_t cols);
  // `dtype` (kF8E4M3, kI8 or kI4) values, rows x cols, and `scales`, rows x ceil(cols / block_cols);
  // borrowed values must stay valid.
  static WeightMatrix scaled_bytes_owning(DType dtype, std::vector<uint8_t> values, FloatBuffer scales,
                                          int64_t block_cols, int64_t rows, int64_t cols);
  static WeightMatrix scaled_bytes_borrowing(DType dtype, const uint8_t* values, FloatBuffer scales,
                                             int64_t block_cols, int64_t rows, int64_t cols);
  // Packed panels of `dtype` at `data`, which must stay valid and be 32-byte aligned;
  // panel_bytes() long. `block_cols`: scaled bytes' inputs per scale (0 for f32 and bf16).
  static WeightMatrix panels_borrowing(DType dtype, const void* data, int64_t rows, int64_t cols,
                                       int64_t block_cols = 0);
  static int64_t panel_bytes(DType dtype, int64_t rows, int64_t cols, int64_t block_cols = 0);
  // Where scaled-byte panels' scales start, in bytes from their values.
  static int64_t panel_scales_offset(DType dtype, int64_t rows, int64_t cols);
  WeightMatrix(WeightMatrix&& other) noexcept { *this = std::move(other); }
  WeightMatrix& operator=(WeightMatrix&& other) noexcept;
  WeightMatrix(const WeightMatrix&) = delete;
  WeightMatrix& operator=(const WeightMatrix&) = delete;

  DType dtype() const { return dtype_; }
  MatrixLayout layout() const { return layout_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  bool empty() const { return rows_ == 0; }
  const float* f32_data() const { return f32_.data(); }   // kRows, dtype() == kF32
  const uint16_t* bf16_data() const { return bf16_; }     // kRows, dtype() == kBF16
  const uint8_t* byte_data() const { return bytes_; }          // kRows, is_scaled_bytes(dtype())
  const float* byte_scales() const { return scales_.data(); }  // kRows, is_scaled_bytes(dtype())
  int64_t block_cols() const { return block_cols_; }           // scaled bytes: inputs per scale
  int64_t scale_blocks() const { return block_cols_ > 0 ? (cols_ + block_cols_ - 1) / block_cols_ : 0; }
  const void* panel_data() const { return panels_; }     // kPanels
  // kPanels, scaled bytes: panel q's scales for block b at panel_scales() + (q * scale_blocks() + b) * 16.
  const float* panel_scales() const;
  int64_t panel_count() const { return (rows_ + kPanelWidth - 1) / kPanelWidth; }

  // The row-major values' bytes, wherever they live (empty for panels).
  std::span<const std::byte> row_bytes() const;

  // The following need the row-major layout.
  // The same values, borrowed: valid while this matrix (or the mapping it borrows) is.
  WeightMatrix view() const;
  // Row `row` widened to f32 into `out` (cols() values).
  void copy_row(int64_t row, float* out) const;
  // Rows [first, first + count), same dtype (splits fused projections): what this matrix borrows
  // stays borrowed (valid as long as the mapping is), what it owns is copied.
  WeightMatrix slice_rows(int64_t first, int64_t count) const;
  // The transpose, owned, same dtype (Conv1D weights are stored [in, out]); not for scaled bytes.
  WeightMatrix transposed() const;
  // The parts one under the other; all have the same cols and dtype (and scale blocks).
  static WeightMatrix stack(std::span<const WeightMatrix> parts);

 private:
  void require_rows(const char* operation) const;

  DType dtype_ = DType::kF32;
  MatrixLayout layout_ = MatrixLayout::kRows;
  int64_t rows_ = 0, cols_ = 0;
  FloatBuffer f32_;
  std::vector<uint16_t> bf16_owned_;
  const uint16_t* bf16_ = nullptr;
  std::vector<uint8_t> bytes_owned_;
  const uint8_t* bytes_ = nullptr;
  FloatBuffer scales_;
  int64_t block_cols_ = 0;
  const void* panels_ = nullptr;
};

}  // namespace canrun
