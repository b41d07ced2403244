// The weight of a linear layer, [rows = out, cols = in], held as f32 or bf16. The `ref` backend
// widens every matrix to f32; `cpu` keeps bf16 checkpoints as bf16, which halves the memory a
// model needs. Owns its storage or borrows it from a memory mapping.
//
// Two layouts: row-major as loaded, and panels as the compile step packs them for the cpu
// backend's kernels: the rows in groups of kPanelWidth, each group stored column by column
// (for every input k, the group's kPanelWidth weights side by side), the last group padded
// with zero rows. A kernel then reads one contiguous stream per group and each loaded vector
// of weights serves several rows of input.
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
  // Packed panels of `dtype` (f32 or bf16) at `data`, which must stay valid and be 32-byte
  // aligned; panel_bytes() long.
  static WeightMatrix panels_borrowing(DType dtype, const void* data, int64_t rows, int64_t cols);
  static int64_t panel_bytes(DType dtype, int64_t rows, int64_t cols);
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
  const void* panel_data() const { return panels_; }     // kPanels
  int64_t panel_count() const { return (rows_ + kPanelWidth - 1) / kPanelWidth; }

  // The row-major values' bytes, wherever they live (empty for panels).
  std::span<const std::byte> row_bytes() const;

  // The following need the row-major layout.
  // The same values, borrowed: valid while this matrix (or the mapping it borrows) is.
  WeightMatrix view() const;
  // Row `row` widened to f32 into `out` (cols() values).
  void copy_row(int64_t row, float* out) const;
  // Rows [first, first + count) as an owned matrix of the same dtype (splits fused projections).
  WeightMatrix slice_rows(int64_t first, int64_t count) const;
  // The transpose, owned, same dtype (Conv1D weights are stored [in, out]).
  WeightMatrix transposed() const;
  // The parts one under the other; all have the same cols and dtype.
  static WeightMatrix stack(std::span<const WeightMatrix> parts);

 private:
  void require_rows(const char* operation) const;

  DType dtype_ = DType::kF32;
  MatrixLayout layout_ = MatrixLayout::kRows;
  int64_t rows_ = 0, cols_ = 0;
  FloatBuffer f32_;
  std::vector<uint16_t> bf16_owned_;
  const uint16_t* bf16_ = nullptr;
  const void* panels_ = nullptr;
};

}  // namespace canrun
