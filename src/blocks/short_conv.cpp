// The short gated convolution block kind (lfm2's Lfm2ShortConv): in_proj's three outputs B, C
// and x; B*x through a depthwise causal convolution of `kernel` taps over the positions; C times
// that; out_proj. Its per-sequence state is the convolution's (blocks/causal_conv.h).
// Sharded, a rank computes its channels: its output is this rank's partial sum of out_proj.
#include <algorithm>
#include <memory>

#include "blocks/block_kind.h"
#include "blocks/causal_conv.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// inputs {b, c, x [tokens, channels]}, outputs {y [tokens, channels]}:
// y = c * (bias + sum_j w[j] * (b*x)[position - kernel + 1 + j]), inputs before position 0 zero.
class ShortConvStep : public Step {
 public:
  ShortConvStep(Info info, int slot, int64_t channels, int64_t kernel, const FloatBuffer& weight,
                const FloatBuffer& bias)
      : Step(std::move(info)), slot_(slot), channels_(channels), kernel_(kernel), weight_(weight), bias_(bias) {}
  std::string_view kind() const override { return "short_conv"; }

  void run(StepContext& c) const override {
    ConvState& state = c.state().get<ConvState>(slot_);
    const int64_t channels = channels_;
    const float* b = c.value(inputs()[0]);
    const float* gate = c.value(inputs()[1]);
    const float* x = c.value(inputs()[2]);
    float* y = c.value(outputs()[0]);
    std::vector<float> bx(static_cast<size_t>(channels));
    for (int64_t t = 0; t < c.count(); ++t) {
      const int64_t row = t * channels;
      for (int64_t ch = 0; ch < channels; ++ch) bx[ch] = b[row + ch] * x[row + ch];
      causal_conv(state, weight_.data(), bias_.empty() ? nullptr : bias_.data(), kernel_, channels, c.start() + t,
                  bx.data(), y + row);
      for (int64_t ch = 0; ch < channels; ++ch) y[row + ch] *= gate[row + ch];
    }
  }

  StepCost cost(const Program&, const RunShape& shape) const override {
    return {2 * shape.tokens * kernel_ * channels_, 0};
  }

 private:
  int slot_;
  int64_t channels_, kernel_;
  const FloatBuffer& weight_;  // [channels, kernel]
  const FloatBuffer& bias_;    // [channels] or empty
};

class ShortConv : public Block {
 public:
  explicit ShortConv(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const std::string p = place_.tensors + "conv.";
    const int64_t hidden = spec.hidden_size, kernel = spec.conv.kernel;
    const IndexRange mine = place_.layout.channels;
    const bool bias = spec.conv.bias;
    // in_proj's rows are [B; C; x], hidden each; read whole and cut, as fused projections are.
    const WeightMatrix in = v.matrix(p + "in_proj", 3 * hidden, hidden);
    const FloatBuffer in_bias = bias_if(v, bias, p + "in_proj", 3 * hidden);
    for (int part = 0; part < 3; ++part) {
      const IndexRange rows{part * hidden + mine.first, mine.count};
      if (!in.empty()) in_[part] = in.slice_rows(rows.first, rows.count);
      if (!in_bias.empty())
        in_bias_[part] =
            FloatBuffer::owning(std::vector<float>(in_bias.data() + rows.first, in_bias.data() + rows.end()));
    }
    weight_ = slice(v.tensor(p + "conv.weight", {hidden, 1, kernel}), {mine.first * kernel, mine.count * kernel});
    conv_bias_ = slice(bias_if(v, bias, p + "conv", hidden), mine);
    out_ = v.matrix_part(p + "out_proj", hidden, hidden, cols_of(hidden, mine));
    out_bias_ = bias_if(v, bias && place_.shard.rank == 0, p + "out_proj", hidden);
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const std::string& s = place_.steps;
    const std::string module = place_.tensors + "conv";
    const int64_t channels = place_.layout.channels.count, hidden = spec.hidden_size, kernel = spec.conv.kernel;
    if (channels == 0) {  // more ranks than channels: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "conv_zero", {}, {io.out}});
      return;
    }
    const char* parts[3] = {"b", "c", "x"};
    ValueId in[3];
    for (int part = 0; part < 3; ++part) {
      in[part] = program.value(s + "conv." + parts[part], channels);
      add_linear(program, s + "conv.in_proj." + parts[part], io.in, in[part], in_[part], in_bias_[part], hidden);
    }
    const int slot = declare_conv_state(program, s + "conv_state", kernel, channels);
    const ValueId y = program.value(s + "conv.y", channels);
    program.add<ShortConvStep>(Step::Info{s + "conv.conv", {in[0], in[1], in[2]}, {y}, {module + ".out_proj", true}},
                               slot, channels, kernel, weight_, conv_bias_);
    add_linear(program, s + "conv.out_proj", y, io.out, out_, out_bias_, channels, {module + ".out_proj"});
  }

 private:
  BlockPlace place_;
  WeightMatrix in_[3], out_;
  FloatBuffer in_bias_[3], weight_, conv_bias_, out_bias_;
};

const BlockKindRegistration registration("short_conv",
                                         [](const BlockPlace& place) { return std::make_unique<ShortConv>(place); });

}  // namespace
}  // namespace canrun
