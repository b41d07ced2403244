// The steps every block kind builds with: matrix products, norms, activations, residual adds,
// sums over the ranks of a sharded run, and the small moves between them. Each runs through the
// backend's kernel table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/decoder_spec.h"
#include "program/program.h"
#include "program/program_builder.h"
#include "program/tensor_visitor.h"
#include "tensor/float_buffer.h"
#include "tensor/weight_matrix.h"

namespace canrun {

// out = in @ w^T (+ bias); reads `w` and `bias` where the block keeps them.
class LinearStep : public Step {
 public:
  // `out_width` x `in_width`: the matrix's shape, known also when only listing tensors.
  LinearStep(Info info, const WeightMatrix& w, const FloatBuffer& bias, int64_t out_width, int64_t in_width)
      : Step(std::move(info)), w_(w), bias_(bias), out_width_(out_width), in_width_(in_width) {}
  std::string_view kind() const override { return "linear"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;
  StepCost cost(const Program& program, const RunShape& shape) const override;
  const WeightMatrix& weights() const { return w_; }
  const FloatBuffer& bias() const { return bias_; }

 private:
  const WeightMatrix& w_;
  const FloatBuffer& bias_;
  int64_t out_width_, in_width_;
};

// Registers `w` under `name` for packing and appends out = in @ w^T (+ bias).
void add_linear(ProgramBuilder& program, const std::string& name, ValueId in, ValueId out, WeightMatrix& w,
                const FloatBuffer& bias, int64_t in_width, ModuleMatch match = {});

// "<name>.bias" when `wanted`, else empty.
FloatBuffer bias_if(TensorVisitor& tensors, bool wanted, const std::string& name, int64_t size);
// Elements `part` of a vector (a rank's share of a bias); empty stays empty.
FloatBuffer slice(FloatBuffer buffer, IndexRange part);
// Rows `parts` of a vector of rows of `width` floats, one after the other, owned (a rank's
// channels of a convolution); empty stays empty.
FloatBuffer gather(const FloatBuffer& values, const std::vector<IndexRange>& parts, int64_t width = 1);
// Rows `parts` of a matrix one under the other: a rank's share of a projection whose outputs are
// several stacked parts. One run of rows is a slice_rows (it borrows what the matrix borrows),
// several are copied once.
WeightMatrix stack_rows(const WeightMatrix& matrix, const std::vector<IndexRange>& parts);
// The rows (or columns) of `heads` heads of `width` each.
inline IndexRange head_range(IndexRange heads, int64_t width) { return {heads.first * width, heads.count * width}; }

// The weights of a norm: bias empty for RMSNorm and bias-free LayerNorm.
struct NormWeights {
  FloatBuffer weight, bias;
  bool present() const { return !weight.empty(); }
};

// Visits "<name>.weight" (and ".bias"), folding Gemma's (1 + w) into w once; absent when `name` is empty.
NormWeights visit_norm(TensorVisitor& tensors, const NormSpec& spec, const std::string& name, int64_t size);

// out = norm(in) over groups of `dim` floats (a row, or each head of a row), all with one weight
// row, or each group of a token with its own when the weights hold several (per-head weights).
class NormStep : public Step {
 public:
  NormStep(Info info, const NormWeights& weights, NormSpec spec, int64_t dim)
      : Step(std::move(info)), weights_(weights), spec_(spec), dim_(dim) {}
  std::string_view kind() const override { return "norm"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  const NormWeights& weights_;
  NormSpec spec_;
  int64_t dim_;
};

// deepseek_v4's SwiGLU inputs, in place: gate at most `limit`, up within [-limit, limit].
void limit_swiglu_inputs(float limit, float* gate, float* up, int64_t n);

// out = act(in), or with two inputs out = act(gate) * up; with `clamped`, gpt-oss's clamped
// SwiGLU, or act(gate) * up after limit_swiglu_inputs when it says limited_swiglu.
class ActivationStep : public Step {
 public:
  ActivationStep(Info info, Activation act, const MoeSpec* clamped = nullptr)
      : Step(std::move(info)), act_(act), clamped_(clamped) {}
  std::string_view kind() const override { return "activation"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  Activation act_;
  const MoeSpec* clamped_;
};

// inputs {x, y}, output x: x += y * scale.
class AddStep : public Step {
 public:
  AddStep(Info info, float scale = 1.0f) : Step(std::move(info)), scale_(scale) {}
  std::string_view kind() const override { return "add"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  float scale_;
};

// In place: the element-wise sum of every rank's value (a no-op unsharded).
class AllReduceStep : public Step {
 public:
  using Step::Step;
  std::string_view kind() const override { return "all_reduce"; }
  void run(StepContext& context) const override;
};

// out = 0: the part of a sum a rank without heads or columns adds.
class ZeroStep : public Step {
 public:
  using Step::Step;
  std::string_view kind() const override { return "zero"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;
};

// out = columns [first, first + out width) of every row of in.
class CopyColumnsStep : public Step {
 public:
  CopyColumnsStep(Info info, int64_t first) : Step(std::move(info)), first_(first) {}
  std::string_view kind() const override { return "copy_columns"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  int64_t first_;
};

// inputs {x [tokens, groups * in]}, outputs {y [tokens, groups * out]}: group g of each row through
// its own matrix, a block-diagonal projection (deepseek_v4's grouped output projection).
class GroupedLinearStep : public Step {
 public:
  GroupedLinearStep(Info info, const std::vector<WeightMatrix>& groups) : Step(std::move(info)), groups_(groups) {}
  std::string_view kind() const override { return "grouped_linear"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;
  StepCost cost(const Program& program, const RunShape& shape) const override;

 private:
  const std::vector<WeightMatrix>& groups_;
};

// out = the last row of in: what the logits are computed from (the last rows(out) rows when a run
// asks for several, as speculative decoding's check of drafted tokens does).
class LastRowStep : public Step {
 public:
  using Step::Step;
  std::string_view kind() const override { return "last_row"; }
  void run(StepContext& context) const override;
};

// out[t, j] = in[t, j] * factors[j], or with one factor every column times it; in place when
// out is in (falcon_h1's multipliers).
class ScaleColumnsStep : public Step {
 public:
  ScaleColumnsStep(Info info, std::vector<float> factors) : Step(std::move(info)), factors_(std::move(factors)) {}
  std::string_view kind() const override { return "scale_columns"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  std::vector<float> factors_;
};

// In place: x *= scale, then x = cap * tanh(x / cap) when cap > 0 (the logits of granite,
// cohere, gemma2).
class ScaleSoftcapStep : public Step {
 public:
  ScaleSoftcapStep(Info info, float scale, float cap) : Step(std::move(info)), scale_(scale), cap_(cap) {}
  std::string_view kind() const override { return "scale_softcap"; }
  bool row_wise() const override { return true; }
  void run(StepContext& context) const override;

 private:
  float scale_, cap_;
};

}  // namespace canrun
