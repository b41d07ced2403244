// How block kinds declare their tensors: each block visits the tensors it reads, under the
// transformers names of the published checkpoint, in one order. The same visit loads a model
// (CheckpointLoader), lists a checkpoint's tensors for synthetic weights and parameter counts
// (TensorLister), and plans memory without any weights at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/shard.h"
#include "tensor/float_buffer.h"
#include "tensor/weight_matrix.h"

namespace canrun {

// The part of a [out, in] matrix one rank of a sharded run holds: its output rows and input columns.
struct MatrixPart {
  IndexRange rows, cols;
};
inline MatrixPart rows_of(IndexRange rows, int64_t in) { return {rows, {0, in}}; }
inline MatrixPart cols_of(int64_t out, IndexRange cols) { return {{0, out}, cols}; }

// What a tensor is: what a synthetic checkpoint fills it with, and what the memory planner
// counts it as. kProjection: a layer's [out, in] projection (matrix_part), what an FP8
// checkpoint stores in FP8; kMatrix: any other matrix read whole (heads, routers, an embedding
// table tied to the head), held as stored like projections; kTable: a table the run looks rows
// up in (token embeddings not tied to the head), of which a run reads only its tokens' rows;
// kFloatTensor: a tensor read whole as f32 (stacked experts, other n-d tensors);
// kNorm: a scale the model multiplies by; kOffsetNorm: one it multiplies by (1 + w) (Gemma's,
// Qwen3.5's RMSNorm); kPacked: U8 (MXFP4 blocks and scales); kIndices: I64 integers (a table
// of expert ids).
enum class TensorRole { kProjection, kMatrix, kTable, kFloatTensor, kNorm, kOffsetNorm, kBias, kPacked, kIndices };

// Each call returns the tensor's values when loading, and an empty one when only listing.
class TensorVisitor {
 public:
  virtual ~TensorVisitor() = default;
  // Part `part` of a [out, in] projection "<name>.weight" (stored [in, out] for Conv1D), as [out, in].
  virtual WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) = 0;
  // A [out, in] matrix under its full name, stored so in every family (lm_head, routers).
  virtual WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) = 0;
  WeightMatrix matrix(const std::string& name, int64_t out, int64_t in) {
    return matrix_part(name, out, in, {{0, out}, {0, in}});
  }
  WeightMatrix plain_matrix(const std::string& name, int64_t out, int64_t in) {
    return plain_part(name, out, in, {{0, out}, {0, in}});
  }
  // The token embeddings [rows, cols]: bf16 stays bf16 on cpu (a lookup widens one row).
  virtual WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) = 0;
  // The output projection tied to the embeddings `name`, already visited as `embeddings`.
  virtual WeightMatrix tied_head(const std::string& name, const WeightMatrix& embeddings) = 0;
  virtual FloatBuffer vector(const std::string& name, int64_t size, TensorRole role) = 0;
  // A plain tensor of this shape (positions, conv kernels).
  virtual FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) = 0;
  // Stacked experts [E, ...], read whole; the rank keeps the experts `kept` of it.
  virtual FloatBuffer stacked(const std::string& name, std::vector<int64_t> shape, IndexRange kept) = 0;
  // MXFP4 "<name>_blocks" [prefix, rows, cols/32, 16] and "<name>_scales" [prefix, rows, cols/32]
  // dequantised whole to [prefix, rows, cols]; the rank keeps the experts `kept` of it.
  virtual FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols, IndexRange kept) = 0;
  // An integer tensor stored as I64 (or I32), each value checked to lie in [0, bound).
  virtual std::vector<int32_t> indices(const std::string& name, std::vector<int64_t> shape, int64_t bound) = 0;
};

// The tensors a checkpoint holds, as published (names, stored shapes).
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  TensorRole role;
  int64_t held = 0;  // the elements the listed rank keeps (its part of a split tensor)
};

class TensorLister : public TensorVisitor {
 public:
  explicit TensorLister(bool conv1d) : conv1d_(conv1d) {}
  WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart) override;
  WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart) override;
  WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) override;
  // The table `name` is also the head: read whole.
  WeightMatrix tied_head(const std::string& name, const WeightMatrix&) override;
  FloatBuffer vector(const std::string& name, int64_t size, TensorRole role) override;
  FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) override;
  FloatBuffer stacked(const std::string& name, std::vector<int64_t> shape, IndexRange kept) override;
  FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols, IndexRange kept) override;
  std::vector<int32_t> indices(const std::string& name, std::vector<int64_t> shape, int64_t bound) override;
  std::vector<TensorInfo> tensors;

 private:
  void add_stacked(const std::string& name, std::vector<int64_t> shape, TensorRole role, IndexRange kept);
  bool conv1d_;
};

}  // namespace canrun
