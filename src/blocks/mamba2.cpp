// The Mamba-2 block kind (nemotron_h's "M" layers, MambaSpec): a selective state space per head
// instead of a KV cache, updated at each position (prefill runs the same recurrence, token by
// token), after a depthwise causal convolution over x, B and C. Its per-sequence state is both.
#include <algorithm>
#include <array>
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
    const int64_t tokens = c.count(), inner = inner_width(spec_);
    // transformers clamps dt in its chunked scan (a sequence's first run, and any run of several
    // positions) but not in its one-position step.
    const bool clamp = c.start() == 0 || tokens > 1;
    // The convolution carries its inputs from one position to the next, so it runs position by
    // position; then each head's recurrence runs on a thread of its own.
    std::vector<float> mixed(static_cast<size_t>(tokens * channels));
    for (int64_t t = 0; t < tokens; ++t) {
      float* row = mixed.data() + t * channels;
      causal_conv(conv, conv_weight_.data(), conv_bias_.empty() ? nullptr : conv_bias_.data(), spec_.conv_kernel,
                  channels, c.start() + t, xbc + t * channels, row);
      c.kernels().activation(Activation::kSilu, row, channels, row);
    }
#pragma omp parallel for schedule(static) if (heads > 1)
    for (int64_t h = 0; h < heads; ++h) {
      const float a = -std::exp(a_log_.data()[h]);
      float* s = states + h * p_dim * n_dim;
      for (int64_t t = 0; t < tokens; ++t) {
        const float* x = mixed.data() + t * channels + h * p_dim;
        const float* bh = mixed.data() + t * channels + inner + (h / heads_per_group) * n_dim;
        const float* ch = bh + spec_.groups * n_dim;
        float dt = softplus(dt_in[t * heads + h] + dt_bias_.data()[h]);
        if (clamp) dt = std::min(std::max(dt, spec_.dt_min), spec_.dt_max);
        const float decay = std::exp(dt * a);
        float* y = out + (t * heads + h) * p_dim;
        for (int64_t p = 0; p < p_dim; ++p) {
          float* row = s + p * n_dim;
          float acc = 0.0f;
          for (int64_t n = 0; n < n_dim; ++n) {
            row[n] = row[n] * decay + dt * bh[n] * x[p];
            acc += row[n] * ch[n];
          }
          y[p] = acc + d_.data()[h] * x[p];
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

// Sharded, a rank holds whole groups (mamba_groups of the layout): their heads' z, x and dt rows
// of in_proj, their B and C, their heads' state and norm weights and out_proj columns. Its
// output is this rank's partial sum of out_proj.
class Mamba2 : public Block {
 public:
  explicit Mamba2(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const MambaSpec& m = spec.mamba;
    const std::string p = prefix();
    const int64_t hidden = spec.hidden_size, inner = inner_width(m), channels = conv_width(m);
    const int64_t projected = inner + channels + m.heads, p_dim = m.head_dim, n_dim = m.state_size;
    const IndexRange groups = place_.layout.mamba_groups;
    const IndexRange heads{groups.first * (m.heads / m.groups), groups.count * (m.heads / m.groups)};
    mine_ = m;
    mine_.heads = heads.count;
    mine_.groups = groups.count;
    // This rank's channels of the convolution's input [x; B; C], and of in_proj's rows [z; that; dt].
    const std::vector<IndexRange> conv_parts = {head_range(heads, p_dim),
                                                {inner + groups.first * n_dim, groups.count * n_dim},
                                                {inner + (m.groups + groups.first) * n_dim, groups.count * n_dim}};
    std::vector<IndexRange> xbc_rows;
    for (const IndexRange& part : conv_parts) xbc_rows.push_back({inner + part.first, part.count});
    const std::vector<IndexRange> z_rows = {head_range(heads, p_dim)};
    const std::vector<IndexRange> dt_rows = {{inner + channels + heads.first, heads.count}};

    const WeightMatrix in_proj = v.matrix(p + "in_proj", projected, hidden);
    const FloatBuffer in_bias = bias_if(v, m.proj_bias, p + "in_proj", projected);
    conv_weight_ = gather(v.tensor(p + "conv1d.weight", {channels, 1, m.conv_kernel}), conv_parts, m.conv_kernel);
    conv_bias_ = gather(bias_if(v, m.conv_bias, p + "conv1d", channels), conv_parts);
    dt_bias_ = slice(v.vector(p + "dt_bias", m.heads, TensorRole::kBias), heads);
    a_log_ = slice(v.vector(p + "A_log", m.heads, TensorRole::kBias), heads);
    d_ = slice(v.vector(p + "D", m.heads, TensorRole::kBias), heads);
    if (m.gated_norm) {
      norm_ = visit_norm(v, norm_spec(), p + "norm", inner);
      norm_.weight = slice(std::move(norm_.weight), head_range(heads, p_dim));
    }
    out_ = v.matrix_part(p + "out_proj", hidden, inner, cols_of(hidden, head_range(heads, p_dim)));
    out_bias_ = bias_if(v, m.proj_bias && place_.shard.rank == 0, p + "out_proj", hidden);
    if (in_proj.empty() || heads.count == 0) return;  // listing only, or no groups here
    z_ = stack_rows(in_proj, z_rows);
    xbc_ = stack_rows(in_proj, xbc_rows);
    dt_ = stack_rows(in_proj, dt_rows);
    z_bias_ = gather(in_bias, z_rows);
    xbc_bias_ = gather(in_bias, xbc_rows);
    dt_proj_bias_ = gather(in_bias, dt_rows);
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const std::string s = place_.steps + "mamba.", module = prefix();
    if (mine_.heads == 0) {  // more ranks than groups: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "zero", {}, {io.out}});
      return;
    }
    const int64_t hidden = place_.spec.hidden_size, inner = inner_width(mine_), channels = conv_width(mine_);
    const ValueId z = program.value(s + "z", inner), xbc = program.value(s + "xbc", channels);
    const ValueId dt = program.value(s + "dt", mine_.heads);
    ValueId in = io.in;
    if (mine_.in_scale != 1.0f) {
      in = program.value(s + "in_scaled", hidden);
      program.add<ScaleColumnsStep>(Step::Info{s + "in_scale", {io.in}, {in}}, std::vector<float>{mine_.in_scale});
    }
    // in_proj's column ranges name the module output each part is, unsharded.
    const bool whole = place_.shard.size == 1;
    const auto in_proj_columns = [&](int64_t begin, int64_t end) {
      return whole ? ModuleMatch{module + "in_proj", false, begin, end} : ModuleMatch{};
    };
    add_linear(program, s + "in_proj_z", in, z, z_, z_bias_, hidden, in_proj_columns(0, inner));
    add_linear(program, s + "in_proj_xbc", in, xbc, xbc_, xbc_bias_, hidden, in_proj_columns(inner, inner + channels));
    add_linear(program, s + "in_proj_dt", in, dt, dt_, dt_proj_bias_, hidden,
               in_proj_columns(inner + channels, inner + channels + mine_.heads));
    scale_projections(program, z, xbc, dt);
    const int conv_slot = declare_conv_state(program, place_.steps + "conv_state", mine_.conv_kernel, channels);
    const int ssm_slot = declare_recurrent_state(program, place_.steps + "ssm_state", inner * mine_.state_size);
    const ValueId y = program.value(s + "y", inner);
    program.add<SelectiveScanStep>(Step::Info{s + "scan", {xbc, dt}, {y}}, mine_, conv_slot, ssm_slot, conv_weight_,
                                   conv_bias_, a_log_, d_, dt_bias_);
    // The RMSNorm of each group's heads: of y * silu(z) (NemotronHRMSNormGated), or of y before
    // the gate. Its last step's output is out_proj's input.
    const ModuleMatch out_proj_input{whole ? module + "out_proj" : "", true};
    const auto gate = [&](const ModuleMatch& match) {
      program.add<ActivationStep>(Step::Info{s + "gate", {z, y}, {y}, match}, Activation::kSilu);
    };
    const auto norm = [&](const ModuleMatch& match) {
      program.add<NormStep>(Step::Info{s + "norm", {y}, {y}, match}, norm_, norm_spec(), inner / mine_.groups);
    };
    if (!mine_.gated_norm) {
      gate(out_proj_input);
    } else if (mine_.norm_before_gate) {
      norm({});
      gate(out_proj_input);
    } else {
      gate({});
      norm(out_proj_input);
    }
    add_linear(program, s + "out_proj", y, io.out, out_, out_bias_, inner, {module + "out_proj"});
    if (mine_.out_scale != 1.0f)
      program.add<ScaleColumnsStep>(Step::Info{s + "out_scale", {io.out}, {io.out}},
                                    std::vector<float>{mine_.out_scale});
  }

 private:
  // falcon_h1's multipliers of in_proj's outputs, over this rank's columns of z, [x; B; C] and dt.
  void scale_projections(ProgramBuilder& program, ValueId z, ValueId xbc, ValueId dt) const {
    const std::array<float, 5>& k = mine_.zxbcdt_scales;
    if (k == std::array<float, 5>{1.0f, 1.0f, 1.0f, 1.0f, 1.0f}) return;
    const std::string s = place_.steps + "mamba.";
    std::vector<float> xbc_scales(static_cast<size_t>(inner_width(mine_)), k[1]);
    xbc_scales.resize(xbc_scales.size() + static_cast<size_t>(mine_.groups * mine_.state_size), k[2]);
    xbc_scales.resize(xbc_scales.size() + static_cast<size_t>(mine_.groups * mine_.state_size), k[3]);
    program.add<ScaleColumnsStep>(Step::Info{s + "z_scale", {z}, {z}}, std::vector<float>{k[0]});
    program.add<ScaleColumnsStep>(Step::Info{s + "xbc_scale", {xbc}, {xbc}}, std::move(xbc_scales));
    program.add<ScaleColumnsStep>(Step::Info{s + "dt_scale", {dt}, {dt}}, std::vector<float>{k[4]});
  }

  std::string prefix() const { return place_.tensors + place_.spec.names.mamba + "."; }
  NormSpec norm_spec() const { return NormSpec{NormKind::kRms, false, false, place_.spec.mamba.norm_eps}; }

  BlockPlace place_;
  MambaSpec mine_;  // this rank's heads and groups
  WeightMatrix z_, xbc_, dt_, out_;
  FloatBuffer z_bias_, xbc_bias_, dt_proj_bias_, out_bias_;
  FloatBuffer conv_weight_, conv_bias_, dt_bias_, a_log_, d_;
  NormWeights norm_;
};

const BlockKindRegistration registration("mamba2",
                                         [](const BlockPlace& place) { return std::make_unique<Mamba2>(place); });

}  // namespace
}  // namespace canrun
