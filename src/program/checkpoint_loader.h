// Loads the tensors block kinds visit from a checkpoint's safetensors files, checking shapes.
// f32 tensors are used in place from the mapping; bf16/f16 are widened once, except that the cpu
// backend keeps bf16 matrices as bf16 (in place when aligned) and FP8 matrices as FP8 with a
// scale per row and block of inputs. A rank of a sharded run reads only its part of each split
// matrix, letting go of the mapped pages it copied from. Elsewhere FP8 matrices are dequantised
// with their block scales to f32.
#pragma once

#include "checkpoint/safetensors.h"
#include "program/tensor_visitor.h"
#include "tensor/fp8.h"

namespace canrun {

class CheckpointLoader : public TensorVisitor {
 public:
  // `conv1d`: the family stores projections [in, out] (gpt2); `fp8`: an FP8 checkpoint's block
  // size; `keep_stored`: bf16 and FP8 matrices stay as stored.
  CheckpointLoader(const WeightStore& store, bool conv1d, Fp8Block fp8, bool keep_stored)
      : store_(store), conv1d_(conv1d), fp8_(fp8), keep_stored_(keep_stored) {}

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
  const WeightStore& store_;
  bool conv1d_;
  Fp8Block fp8_;
  bool keep_stored_;
};

}  // namespace canrun
