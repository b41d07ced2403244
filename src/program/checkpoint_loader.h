// Loads the tensors block kinds visit from a checkpoint's safetensors files, checking shapes.
// Matrices stay as stored: f32 and bf16 in place from the mapping (when aligned), FP8 as FP8
// with a scale per row and block of inputs; f16 ones are widened to f32. Both backends compute
// on them as they are (ref widens each row as it uses it), so no backend holds an f32 copy of
// a bf16 model. A rank of a sharded run reads only its part of each split matrix, letting go of
// the mapped pages it copied from. FP8 parts whose blocks of inputs are not the checkpoint's
// are dequantised with their block scales to f32. Packed int8 and int4 matrices
// (compressed-tensors) stay int8 and int4 with f32 scales per row and group, like FP8; parts
// whose columns start inside a group (or a byte) are dequantised to their scales' type. GPTQ
// matrices are laid out again as the same int8 and int4 rows (or dequantised to f32 in a part
// whose columns start inside a group or a byte).
// Vectors and other tensors are read as f32.
#pragma once

#include "checkpoint/safetensors.h"
#include "program/tensor_visitor.h"
#include "tensor/fp8.h"
#include "tensor/packed_int.h"

namespace canrun {

class CheckpointLoader : public TensorVisitor {
 public:
  // `conv1d`: the family stores projections [in, out] (gpt2); `fp8`: an FP8 checkpoint's block
  // size; `packed_int`: a compressed-tensors or GPTQ checkpoint's packing.
  CheckpointLoader(const WeightStore& store, bool conv1d, Fp8Block fp8, PackedIntScheme packed_int)
      : store_(store), conv1d_(conv1d), fp8_(fp8), packed_int_(packed_int) {}

  WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) override;
  WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) override;
  WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) override;
  WeightMatrix tied_head(const std::string& name, const WeightMatrix& embeddings) override;
  FloatBuffer vector(const std::string& name, int64_t size, TensorRole role) override;
  FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) override;
  FloatBuffer stacked(const std::string& name, std::vector<int64_t> shape, IndexRange) override;
  FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols, IndexRange) override;
  std::vector<int32_t> indices(const std::string& name, std::vector<int64_t> shape, int64_t bound) override;

 private:
  FloatBuffer read(const std::string& name, const std::vector<int64_t>& shape);
  WeightMatrix fp8_part(const std::string& name, int64_t out, int64_t in, MatrixPart part);
  WeightMatrix packed_int_part(const std::string& stem, int64_t out, int64_t in, MatrixPart part);
  WeightMatrix int_part(const TensorRecord& words, const TensorRecord& scales, int64_t in, MatrixPart part);
  WeightMatrix gptq_part(const std::string& stem, int64_t out, int64_t in, MatrixPart part);
  const WeightStore& store_;
  bool conv1d_;
  Fp8Block fp8_;
  PackedIntScheme packed_int_;
};

}  // namespace canrun
