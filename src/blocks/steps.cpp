#include "blocks/steps.h"

#include <algorithm>
#include <cstring>

#include "program/step_context.h"

namespace canrun {

void LinearStep::run(StepContext& c) const {
  const ValueId in = inputs()[0], out = outputs()[0];
  c.kernels().linear(c.value(in), c.rows(in), w_, bias_.empty() ? nullptr : bias_.data(), c.choices(), c.value(out));
}

StepCost LinearStep::cost(const Program& program, const RunShape& shape) const {
  const int64_t rows = program.rows(inputs()[0], shape.tokens);
  const auto element = static_cast<int64_t>(dtype_size(w_.dtype()));
  return {2 * rows * out_width_ * in_width_, out_width_ * in_width_ * element};
}

void add_linear(ProgramBuilder& program, const std::string& name, ValueId in, ValueId out, WeightMatrix& w,
                const FloatBuffer& bias, int64_t in_width, ModuleMatch match) {
  program.matrix(name, w);
  program.add<LinearStep>(Step::Info{name, {in}, {out}, std::move(match)}, w, bias, program.info(out).width, in_width);
}

FloatBuffer bias_if(TensorVisitor& tensors, bool wanted, const std::string& name, int64_t size) {
  return wanted ? tensors.vector(name + ".bias", size, TensorRole::kBias) : FloatBuffer();
}

FloatBuffer slice(FloatBuffer buffer, IndexRange part) {
  if (buffer.empty() || (part.first == 0 && part.count == static_cast<int64_t>(buffer.size()))) return buffer;
  return FloatBuffer::owning(std::vector<float>(buffer.data() + part.first, buffer.data() + part.end()));
}

FloatBuffer gather(const FloatBuffer& values, const std::vector<IndexRange>& parts, int64_t width) {
  if (values.empty()) return {};
  std::vector<float> out;
  for (const IndexRange& part : parts)
    out.insert(out.end(), values.data() + part.first * width, values.data() + part.end() * width);
  return FloatBuffer::owning(std::move(out));
}

WeightMatrix stack_rows(const WeightMatrix& matrix, const std::vector<IndexRange>& parts) {
  // Adjacent parts as one, so that one run of rows of a mapped matrix stays in the mapping.
  std::vector<IndexRange> merged;
  for (const IndexRange& part : parts) {
    if (!merged.empty() && merged.back().end() == part.first)
      merged.back().count += part.count;
    else
      merged.push_back(part);
  }
  if (merged.size() == 1) return matrix.slice_rows(merged[0].first, merged[0].count);
  const WeightMatrix whole = matrix.view();  // its slices borrow, so the rows are copied once, by stack
  std::vector<WeightMatrix> slices;
  for (const IndexRange& part : merged) slices.push_back(whole.slice_rows(part.first, part.count));
  return WeightMatrix::stack(slices);
}

NormWeights visit_norm(TensorVisitor& tensors, const NormSpec& spec, const std::string& name, int64_t size) {
  NormWeights weights;
  if (name.empty()) return weights;
  const TensorRole role = spec.unit_offset ? TensorRole::kOffsetNorm : TensorRole::kNorm;
  weights.weight = tensors.vector(name + ".weight", size, role);
  if (spec.bias) weights.bias = tensors.vector(name + ".bias", size, TensorRole::kBias);
  if (spec.unit_offset && !weights.weight.empty()) {
    // Gemma's RMSNorm multiplies by (1 + w), computed in f32; fold the 1 in once.
    std::vector<float> folded(weights.weight.data(), weights.weight.data() + weights.weight.size());
    for (float& w : folded) w = 1.0f + w;
    weights.weight = FloatBuffer::owning(std::move(folded));
  }
  return weights;
}

void NormStep::run(StepContext& c) const {
  const ValueId in = inputs()[0], out = outputs()[0];
  const int64_t groups = c.floats(in) / dim_;
  const auto norm = [&](const float* x, int64_t weight_row, int64_t rows, float* y) {
    const float* weight = weights_.weight.data() + weight_row * dim_;
    const float* bias = weights_.bias.empty() ? nullptr : weights_.bias.data() + weight_row * dim_;
    if (spec_.kind == NormKind::kRms)
      c.kernels().rms_norm(x, weight, rows, dim_, spec_.eps, y);
    else
      c.kernels().layer_norm(x, weight, bias, rows, dim_, spec_.eps, y);
  };
  // One weight row for every group, or a row per group of each token (per-head q/k norm weights).
  const int64_t weight_rows = static_cast<int64_t>(weights_.weight.size()) / dim_;
  if (weight_rows <= 1) return norm(c.value(in), 0, groups, c.value(out));
  for (int64_t g = 0; g < groups; ++g) norm(c.value(in) + g * dim_, g % weight_rows, 1, c.value(out) + g * dim_);
}

void limit_swiglu_inputs(float limit, float* gate, float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    gate[i] = std::min(gate[i], limit);
    up[i] = std::clamp(up[i], -limit, limit);
  }
}

void ActivationStep::run(StepContext& c) const {
  const ValueId out = outputs()[0];
  const int64_t n = c.floats(out);
  if (inputs().size() == 1) return c.kernels().activation(act_, c.value(inputs()[0]), n, c.value(out));
  float* gate = c.value(inputs()[0]);
  float* up = c.value(inputs()[1]);
  if (clamped_ != nullptr && !clamped_->limited_swiglu)
    return c.kernels().clamped_swiglu(gate, up, n, clamped_->swiglu_alpha, clamped_->swiglu_limit, c.value(out));
  if (clamped_ != nullptr) limit_swiglu_inputs(clamped_->swiglu_limit, gate, up, n);
  c.kernels().gated_activation(act_, gate, up, n, c.value(out));
}

void GroupedLinearStep::run(StepContext& c) const {
  const int64_t rows = c.rows(inputs()[0]), count = static_cast<int64_t>(groups_.size());
  const int64_t in = c.width(inputs()[0]) / count, out = c.width(outputs()[0]) / count;
  std::vector<float> x(static_cast<size_t>(rows * in)), y(static_cast<size_t>(rows * out));
  for (int64_t g = 0; g < count; ++g) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* from = c.value(inputs()[0]) + r * count * in + g * in;
      std::copy(from, from + in, x.data() + r * in);
    }
    c.kernels().linear(x.data(), rows, groups_[static_cast<size_t>(g)], nullptr, c.choices(), y.data());
    for (int64_t r = 0; r < rows; ++r)
      std::copy(y.data() + r * out, y.data() + (r + 1) * out, c.value(outputs()[0]) + r * count * out + g * out);
  }
}

StepCost GroupedLinearStep::cost(const Program& program, const RunShape& shape) const {
  if (groups_.empty() || groups_.front().empty()) return {};
  const int64_t rows = program.rows(inputs()[0], shape.tokens), count = static_cast<int64_t>(groups_.size());
  const int64_t per_group = groups_.front().rows() * groups_.front().cols();
  const auto element = static_cast<int64_t>(dtype_size(groups_.front().dtype()));
  return {2 * rows * count * per_group, count * per_group * element};
}

void AddStep::run(StepContext& c) const {
  c.kernels().add_scaled(c.value(outputs()[0]), c.value(inputs()[1]), c.floats(outputs()[0]), scale_);
}

void AllReduceStep::run(StepContext& c) const {
  c.comm().all_reduce_sum(c.value(outputs()[0]), c.floats(outputs()[0]));
}

void ZeroStep::run(StepContext& c) const { std::fill_n(c.value(outputs()[0]), c.floats(outputs()[0]), 0.0f); }

void CopyColumnsStep::run(StepContext& c) const {
  const ValueId in = inputs()[0], out = outputs()[0];
  const int64_t in_width = c.width(in), width = c.width(out);
  for (int64_t r = 0; r < c.rows(out); ++r)
    std::memcpy(c.value(out) + r * width, c.value(in) + r * in_width + first_, sizeof(float) * width);
}

void LastRowStep::run(StepContext& c) const {
  const ValueId in = inputs()[0], out = outputs()[0];
  const int64_t rows = c.rows(out);
  std::memcpy(c.value(out), c.value(in) + (c.rows(in) - rows) * c.width(in), sizeof(float) * rows * c.width(in));
}

void ScaleColumnsStep::run(StepContext& c) const {
  const float* in = c.value(inputs()[0]);
  float* out = c.value(outputs()[0]);
  const int64_t rows = c.rows(inputs()[0]), width = c.width(inputs()[0]);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t j = 0; j < width; ++j)
      out[t * width + j] = in[t * width + j] * factors_[factors_.size() == 1 ? 0 : static_cast<size_t>(j)];
}

void ScaleSoftcapStep::run(StepContext& c) const {
  float* x = c.value(outputs()[0]);
  const int64_t n = c.floats(outputs()[0]);
  if (scale_ != 1.0f) c.kernels().scale(x, n, scale_);
  if (cap_ > 0) c.kernels().softcap(x, n, cap_);
}

}  // namespace canrun
