// The weight of a linear layer, [rows = out, cols = in] row-major, held as f32 or bf16. The
// `ref` backend widens every matrix to f32; `cpu` keeps bf16 checkpoints as bf16, which halves
// the memory a model needs. Owns its storage or borrows it from a memory-mapped checkpoint.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/float_buffer.h"

namespace canrun {

class WeightMatrix {
 public:
  WeightMatrix() = default;
  static WeightMatrix f32(FloatBuffer values, int64_t rows, int64_t cols);
  static WeightMatrix bf16_owning(std::vector<uint16_t> values, int64_t rows, int64_t cols);
  // `data` must stay valid (a checkpoint mapping) and be 2-byte aligned.
  static WeightMatrix bf16_borrowing(const uint16_t* data, int64_t rows, int64_t cols);
  WeightMatrix(WeightMatrix&& other) noexcept { *this = std::move(other); }
  WeightMatrix& operator=(WeightMatrix&& other) noexcept;
  WeightMatrix(const WeightMatrix&) = delete;
  WeightMatrix& operator=(const WeightMatrix&) = delete;

  DType dtype() const { return dtype_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  bool empty() const { return rows_ == 0; }
  const float* f32_data() const { return f32_.data(); }   // dtype() == kF32
  const uint16_t* bf16_data() const { return bf16_; }     // dtype() == kBF16

  // Rows [first, first + count) as an owned matrix of the same dtype (splits fused projections).
  WeightMatrix slice_rows(int64_t first, int64_t count) const;
  // The transpose, owned, same dtype (Conv1D weights are stored [in, out]).
  WeightMatrix transposed() const;
  // The parts one under the other; all have the same cols and dtype.
  static WeightMatrix stack(std::span<const WeightMatrix> parts);

 private:
  DType dtype_ = DType::kF32;
  int64_t rows_ = 0, cols_ = 0;
  FloatBuffer f32_;
  std::vector<uint16_t> bf16_owned_;
  const uint16_t* bf16_ = nullptr;
};

}  // namespace canrun
