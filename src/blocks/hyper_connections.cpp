#include "blocks/hyper_connections.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "program/step_context.h"

namespace canrun {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// inputs {streams [rows, N * hidden]}, outputs {collapsed [rows, hidden]} and, before a block,
// {post [rows, N], comb [rows, N * N]}: transformers' DeepseekV4HyperConnection (or, with one
// output, DeepseekV4HyperHead), in f32.
class HyperMixStep : public Step {
 public:
  HyperMixStep(Info info, const HyperMixWeights& weights, const HyperConnectionSpec& hyper, float norm_eps)
      : Step(std::move(info)), weights_(weights), hyper_(hyper), norm_eps_(norm_eps) {}
  std::string_view kind() const override { return "hyper_mix"; }
  bool row_wise() const override { return true; }
  StepCost cost(const Program& program, const RunShape& shape) const override {
    const WeightMatrix& w = weights_.projection;
    const int64_t rows = program.rows(inputs()[0], shape.tokens), size = w.rows() * w.cols();
    return {2 * rows * size, size * static_cast<int64_t>(dtype_size(w.dtype()))};
  }

  void run(StepContext& c) const override {
    const int64_t n = hyper_.streams, width = c.width(inputs()[0]), hidden = width / n;
    const bool block = outputs().size() == 3;
    const int64_t mixes = block ? (2 + n) * n : n;
    std::vector<float> normed(static_cast<size_t>(width)), mix(static_cast<size_t>(mixes));
    std::vector<float> pre(static_cast<size_t>(n));
    const float* bias = weights_.bias.data();
    const float* scale = weights_.scales.data();
    for (int64_t r = 0; r < c.rows(inputs()[0]); ++r) {
      const float* x = c.value(inputs()[0]) + r * width;
      c.kernels().rms_norm(x, weights_.ones.data(), 1, width, norm_eps_, normed.data());
      c.kernels().linear(normed.data(), 1, weights_.projection, nullptr, c.choices(), mix.data());
      for (int64_t i = 0; i < n; ++i) pre[i] = sigmoid(mix[i] * scale[0] + bias[i]) + hyper_.eps;
      float* collapsed = c.value(outputs()[0]) + r * hidden;
      for (int64_t d = 0; d < hidden; ++d) {
        float sum = 0.0f;
        for (int64_t i = 0; i < n; ++i) sum += pre[i] * x[i * hidden + d];
        collapsed[d] = sum;
      }
      if (!block) continue;
      float* post = c.value(outputs()[1]) + r * n;
      for (int64_t i = 0; i < n; ++i) post[i] = 2.0f * sigmoid(mix[n + i] * scale[1] + bias[n + i]);
      float* comb = c.value(outputs()[2]) + r * n * n;
      for (int64_t i = 0; i < n * n; ++i) comb[i] = mix[2 * n + i] * scale[2] + bias[2 * n + i];
      for (int64_t i = 0; i < n; ++i) {
        c.kernels().softmax(comb + i * n, n);
        for (int64_t j = 0; j < n; ++j) comb[i * n + j] += hyper_.eps;
      }
      normalize_columns(comb, n);
      for (int64_t step = 1; step < hyper_.sinkhorn_iters; ++step) {
        normalize_rows(comb, n);
        normalize_columns(comb, n);
      }
    }
  }

 private:
  void normalize_rows(float* comb, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) sum += comb[i * n + j];
      for (int64_t j = 0; j < n; ++j) comb[i * n + j] /= sum + hyper_.eps;
    }
  }
  void normalize_columns(float* comb, int64_t n) const {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) sum += comb[i * n + j];
      for (int64_t i = 0; i < n; ++i) comb[i * n + j] /= sum + hyper_.eps;
    }
  }

  const HyperMixWeights& weights_;
  const HyperConnectionSpec& hyper_;
  float norm_eps_;
};

// inputs {streams, out [rows, hidden], post, comb}, outputs {streams}.
class HyperOutputStep : public Step {
 public:
  using Step::Step;
  std::string_view kind() const override { return "hyper_output"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    const int64_t hidden = c.width(inputs()[1]), n = c.width(inputs()[2]);
    std::vector<float> mixed(static_cast<size_t>(n * hidden));
    for (int64_t r = 0; r < c.rows(inputs()[0]); ++r) {
      float* x = c.value(inputs()[0]) + r * n * hidden;
      const float* out = c.value(inputs()[1]) + r * hidden;
      const float* post = c.value(inputs()[2]) + r * n;
      const float* comb = c.value(inputs()[3]) + r * n * n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t d = 0; d < hidden; ++d) {
          float sum = post[i] * out[d];
          for (int64_t m = 0; m < n; ++m) sum += comb[m * n + i] * x[m * hidden + d];
          mixed[i * hidden + d] = sum;
        }
      std::copy(mixed.begin(), mixed.end(), x);
    }
  }
};

// inputs {embedded [rows, hidden]}, outputs {streams [rows, N * hidden]}.
class StreamCopiesStep : public Step {
 public:
  using Step::Step;
  std::string_view kind() const override { return "stream_copies"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    const int64_t hidden = c.width(inputs()[0]), n = c.width(outputs()[0]) / hidden;
    for (int64_t r = 0; r < c.rows(inputs()[0]); ++r) {
      const float* from = c.value(inputs()[0]) + r * hidden;
      for (int64_t i = 0; i < n; ++i) std::copy(from, from + hidden, c.value(outputs()[0]) + (r * n + i) * hidden);
    }
  }
};

HyperMixWeights visit_mix(TensorVisitor& v, const DecoderSpec& spec, const std::string& projection,
                          const std::string& bias, const std::string& scales, int64_t mixes, int64_t scale_count) {
  const int64_t width = spec.hyper.streams * spec.hidden_size;
  HyperMixWeights w;
  w.projection = v.plain_matrix(projection, mixes, width);
  w.bias = v.vector(bias, mixes, TensorRole::kBias);
  w.scales = v.vector(scales, scale_count, TensorRole::kNorm);
  w.ones = FloatBuffer::owning(std::vector<float>(static_cast<size_t>(width), 1.0f));
  return w;
}

}  // namespace

HyperMixWeights visit_block_mix(TensorVisitor& v, const DecoderSpec& spec, const std::string& prefix) {
  const int64_t n = spec.hyper.streams;
  return visit_mix(v, spec, prefix + "_fn", prefix + "_base", prefix + "_scale", (2 + n) * n, 3);
}

HyperMixWeights visit_head_mix(TensorVisitor& v, const DecoderSpec& spec, const std::string& prefix) {
  return visit_mix(v, spec, prefix + ".hc_fn", prefix + ".hc_base", prefix + ".hc_scale", spec.hyper.streams, 1);
}

void add_stream_copies(ProgramBuilder& program, ValueId embedded, ValueId streams) {
  program.add<StreamCopiesStep>(Step::Info{"stream_copies", {embedded}, {streams}});
}

ValueId add_block_mix(ProgramBuilder& program, const std::string& name, const DecoderSpec& spec,
                      HyperMixWeights& weights, ValueId streams, ValueId& post, ValueId& comb) {
  const int64_t n = spec.hyper.streams;
  const ValueId collapsed = program.value(name + "_in", spec.hidden_size);
  post = program.value(name + "_post", n);
  comb = program.value(name + "_comb", n * n);
  program.matrix(name + ".fn", weights.projection);
  program.add<HyperMixStep>(Step::Info{name, {streams}, {collapsed, post, comb}}, weights, spec.hyper, spec.norm.eps);
  return collapsed;
}

void add_block_output(ProgramBuilder& program, const std::string& name, ValueId streams, ValueId out, ValueId post,
                      ValueId comb, ModuleMatch match) {
  program.add<HyperOutputStep>(Step::Info{name, {streams, out, post, comb}, {streams}, std::move(match)});
}

ValueId add_head_mix(ProgramBuilder& program, const DecoderSpec& spec, HyperMixWeights& weights, ValueId last,
                     ModuleMatch match) {
  const ValueId collapsed = program.value("hc_head", spec.hidden_size, ValueRows::kLast);
  program.matrix("hc_head.fn", weights.projection);
  program.add<HyperMixStep>(Step::Info{"hc_head", {last}, {collapsed}, std::move(match)}, weights, spec.hyper,
                            spec.norm.eps);
  return collapsed;
}

}  // namespace canrun
