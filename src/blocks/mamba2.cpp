// The Mamba-2 block kind (nemotron_h's "M" layers, MambaSpec): a selective state space per head
// instead of a KV cache, updated at each position (prefill runs the same recurrence, token by
// token), after a depthwise causal convolution over x, B and C. Its per-sequence state is both.
#include <algorithm>
#include <cmath>

#include "blocks/block_kind.h"
#include "blocks/causal_conv.h"
#include "blocks/recurrent_state.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

int64_t inner_width(const MambaSpec& m) { return m.heads * m.head_dim; }
int64_t conv_width(const MambaSpec& m) { return inner_width(m) + 2 * m.groups * m.state_size; }

// inputs {xbc [tokens, conv width], dt [tokens, heads]}, outputs {y [tokens, heads head_dim]}:
// the convolution and SiLU, then the state space step of each head.
class SelectiveScanStep : public Step {
 public:
  SelectiveScanStep(Info info, const MambaSpec& spec, int conv_slot, int ssm_slot, const FloatBuffer& conv_weight,
                    const FloatBuffer& conv_bias, const FloatBuffer& a_log, const FloatBuffer& d,
                    const FloatBuffer& dt_bias)
      : Step(std::move(info)), spec_(spec), conv_slot_(conv_slot), ssm_slot_(ssm_slot), conv_weight_(conv_weight),
        conv_bias_(conv_bias), a_log_(a_log), d_(d), dt_bias_(dt_bias) {}
  std::string_view kind() const override { return "selective_scan"; }

  void run(StepContext& c) const override {
    ConvState& conv = c.state().get<ConvState>(conv_slot_);
    float* states = c.state().get<RecurrentState>(ssm_slot_).data();  // h [head_dim, state_size] per head
    const int64_t heads = spec_.heads, p_dim = spec_.head_dim, n_dim = spec_.state_size;
    const int64_t channels = conv_width(spec_), heads_per_group = heads / spec_.groups;
    const float* xbc = c.value(inputs()[0]);
    const float* dt_in = c.value(inputs()[1]);
    float* out = c.value(outputs()[0]);
    std::vector<float> mixed(static_cast<size_t>(channels));
    // transformers clamps dt in its chunked scan (a sequence's first run, and any run of several
    // positions) but not in its one-position step.
    const bool clamp = c.start() == 0 || c.count() > 1;
    for (int64_t t = 0; t < c.count(); ++t) {
      causal_conv(conv, conv_weight_.data(), conv_bias_.empty() ? nullptr : conv_bias_.data(), spec_.conv_kernel,
                  channels, c.start() + t, xbc + t * channels, mixed.data());
      c.kernels().activation(Activation::kSilu, mixed.data(), channels, mixed.data());
      const float* x = mixed.data();
      const float* b = x + inner_width(spec_);
      const float* cm = b + spec_.groups * n_dim;
      for (int64_t h = 0; h < heads; ++h) {
        float dt = softplus(dt_in[t * heads + h] + dt_bias_.data()[h]);
        if (clamp) dt = std::max(dt, spec_.dt_min);
        const float decay = std::exp(dt * -std::exp(a_log_.data()[h]));
        const float* bh = b + (h / heads_per_group) * n_dim;
        const float* ch = cm + (h / heads_per_group) * n_dim;
        float* s = states + h * p_dim * n_dim;
        float* y = out + (t * heads + h) * p_dim;
        for (int64_t p = 0; p < p_dim; ++p) {
          const float xp = x[h * p_dim + p];
          float* row = s + p * n_dim;
          float acc = 0.0f;
          for (int64_t n = 0; n < n_dim; ++n) {
            row[n] = row[n] * decay + dt * bh[n] * xp;
            acc += row[n] * ch[n];
          }
          y[p] = acc + d_.data()[h] * xp;
        }
      }
    }
  }

  StepCost cost(const Program&, const RunShape& shape) const override {
    return {5 * shape.tokens * inner_width(spec_) * spec_.state_size, 0};
  }

 private:
  const MambaSpec& spec_;
  int conv_slot_, ssm_slot_;
  const FloatBuffer& conv_weight_;  // [channels, kernel]
  const FloatBuffer& conv_bias_;
  const FloatBuffer& a_log_;
  const FloatBuffer& d_;
  const FloatBuffer& dt_bias_;
};

class Mamba2 : public Block {
 public:
  explicit Mamba2(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const MambaSpec& m = spec.mamba;
    const std::string p = prefix();
    const int64_t hidden = spec.hidden_size, inner = inner_width(m), channels = conv_width(m);
    const int64_t projected = inner + channels + m.heads;
    const WeightMatrix in_proj = v.matrix(p + "in_proj", projected, hidden);
    in_bias_ = bias_if(v, m.proj_bias, p + "in_proj", projected);
    conv_weight_ = v.tensor(p + "conv1d.weight", {channels, 1, m.conv_kernel});
    conv_bias_ = bias_if(v, m.conv_bias, p + "conv1d", channels);
    dt_bias_ = v.vector(p + "dt_bias", m.heads, TensorRole::kBias);
    a_log_ = v.vector(p + "A_log", m.heads, TensorRole::kBias);
    d_ = v.vector(p + "D", m.heads, TensorRole::kBias);
    norm_ = visit_norm(v, norm_spec(), p + "norm", inner);
    out_ = v.matrix(p + "out_proj", hidden, inner);
    out_bias_ = bias_if(v, m.proj_bias, p + "out_proj", hidden);
    if (in_proj.empty()) return;  // listing only
    // in_proj's rows: [z; x, B, C (the convolution's input); dt].
    z_ = in_proj.slice_rows(0, inner);
    xbc_ = in_proj.slice_rows(inner, channels);
    dt_ = in_proj.slice_rows(inner + channels, m.heads);
    if (in_bias_.empty()) return;
    z_bias_ = FloatBuffer::borrowing(in_bias_.data(), inner);
    xbc_bias_ = FloatBuffer::borrowing(in_bias_.data() + inner, channels);
    dt_proj_bias_ = FloatBuffer::borrowing(in_bias_.data() + inner + channels, m.heads);
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const MambaSpec& m = spec.mamba;
    const std::string s = place_.steps + "mamba.", module = prefix();
    const int64_t hidden = spec.hidden_size, inner = inner_width(m), channels = conv_width(m);
    const ValueId z = program.value(s + "z", inner), xbc = program.value(s + "xbc", channels);
    const ValueId dt = program.value(s + "dt", m.heads);
    add_linear(program, s + "in_proj_z", io.in, z, z_, z_bias_, hidden, {module + "in_proj", false, 0, inner});
    add_linear(program, s + "in_proj_xbc", io.in, xbc, xbc_, xbc_bias_, hidden,
               {module + "in_proj", false, inner, inner + channels});
    add_linear(program, s + "in_proj_dt", io.in, dt, dt_, dt_proj_bias_, hidden,
               {module + "in_proj", false, inner + channels, inner + channels + m.heads});
    const int conv_slot = declare_conv_state(program, place_.steps + "conv_state", m.conv_kernel, channels);
    const int ssm_slot = declare_recurrent_state(program, place_.steps + "ssm_state", inner * m.state_size);
    const ValueId y = program.value(s + "y", inner);
    program.add<SelectiveScanStep>(Step::Info{s + "scan", {xbc, dt}, {y}}, m, conv_slot, ssm_slot, conv_weight_,
                                   conv_bias_, a_log_, d_, dt_bias_);
    // NemotronHRMSNormGated: y * silu(z) first, then the RMSNorm of each group's heads.
    program.add<ActivationStep>(Step::Info{s + "gate", {z, y}, {y}}, Activation::kSilu);
    program.add<NormStep>(Step::Info{s + "norm", {y}, {y}, {module + "out_proj", true}}, norm_, norm_spec(),
                          inner / m.groups);
    add_linear(program, s + "out_proj", y, io.out, out_, out_bias_, inner, {module + "out_proj"});
  }

 private:
  std::string prefix() const { return place_.tensors + place_.spec.names.mamba + "."; }
  NormSpec norm_spec() const { return NormSpec{NormKind::kRms, false, false, place_.spec.mamba.norm_eps}; }

  BlockPlace place_;
  WeightMatrix z_, xbc_, dt_, out_;
  FloatBuffer in_bias_, z_bias_, xbc_bias_, dt_proj_bias_, out_bias_;  // the three parts borrow in_bias_
  FloatBuffer conv_weight_, conv_bias_, dt_bias_, a_log_, d_;
  NormWeights norm_;
};

const BlockKindRegistration registration("mamba2",
                                         [](const BlockPlace& place) { return std::make_unique<Mamba2>(place); });

}  // namespace
}  // namespace canrun
