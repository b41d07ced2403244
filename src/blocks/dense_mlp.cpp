// The dense MLP block kind: down(act(gate(x)) * up(x)), or down(act(up(x))) without a gate;
// gate and up fused in one projection, [gate; up], for some families (phi3, modernbert's Wi).
// Sharded, a rank computes its intermediate columns: its output is this rank's partial sum of
// the down projection.
#include <algorithm>
#include <cmath>

#include "blocks/block_kind.h"
#include "blocks/steps.h"
#include "kernels/softplus.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// xIELU's scalars, as transformers' XIELUActivation derives them from its parameters a_p, a_n
// and buffers beta, eps: alpha_p = softplus(a_p), alpha_n = beta + softplus(a_n).
struct Xielu {
  float alpha_p = 0, alpha_n = 0, beta = 0, eps = 0;
};

// in place: x > 0: alpha_p x^2 + beta x; else (expm1(min(x, eps)) - x) alpha_n + beta x.
class XieluStep : public Step {
 public:
  XieluStep(Info info, const Xielu& xielu) : Step(std::move(info)), xielu_(xielu) {}
  std::string_view kind() const override { return "xielu"; }
  bool row_wise() const override { return true; }
  void run(StepContext& c) const override {
    float* x = c.value(inputs()[0]);
    const Xielu& a = xielu_;
    for (int64_t i = 0, n = c.rows(inputs()[0]) * c.width(inputs()[0]); i < n; ++i)
      x[i] = x[i] > 0 ? a.alpha_p * x[i] * x[i] + a.beta * x[i]
                      : (std::expm1(std::min(x[i], a.eps)) - x[i]) * a.alpha_n + a.beta * x[i];
  }

 private:
  const Xielu& xielu_;
};

class DenseMlp : public Block {
 public:
  explicit DenseMlp(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const std::string& p = place_.tensors;
    const int64_t hidden = spec.hidden_size, ffn = layer_ffn_width(spec, place_.layer);
    const IndexRange mine = place_.layout.ffn;
    if (spec.fused_gate_up) {
      const WeightMatrix fused = v.matrix(p + n.gate_up, 2 * ffn, hidden);
      const int64_t gate_at = spec.fused_up_first ? ffn : 0, up_at = ffn - gate_at;
      if (!fused.empty()) {
        gate_ = fused.slice_rows(gate_at + mine.first, mine.count);
        up_ = fused.slice_rows(up_at + mine.first, mine.count);
      }
      const FloatBuffer fused_bias = bias_if(v, spec.mlp_bias, p + n.gate_up, 2 * ffn);
      gate_bias_ = gather(fused_bias, {{gate_at + mine.first, mine.count}});
      up_bias_ = gather(fused_bias, {{up_at + mine.first, mine.count}});
    } else {
      if (spec.gated_mlp) gate_ = v.matrix_part(p + n.gate, ffn, hidden, rows_of(mine, hidden));
      up_ = v.matrix_part(p + n.up, ffn, hidden, rows_of(mine, hidden));
      if (spec.gated_mlp) gate_bias_ = slice(bias_if(v, spec.mlp_bias, p + n.gate, ffn), mine);
      up_bias_ = slice(bias_if(v, spec.mlp_bias, p + n.up, ffn), mine);
    }
    down_ = v.matrix_part(p + n.down, hidden, ffn, cols_of(hidden, mine));
    down_bias_ = bias_if(v, (spec.mlp_bias || spec.down_bias) && place_.shard.rank == 0, p + n.down, hidden);
    if (spec.activation == Activation::kXielu) visit_xielu(v, p + "mlp.act_fn.");
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const std::string& s = place_.steps;
    const std::string& module = place_.tensors;
    const int64_t ffn = place_.layout.ffn.count, hidden = spec.hidden_size;
    if (ffn == 0) {  // more ranks than intermediate columns: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "mlp_zero", {}, {io.out}});
      return;
    }
    const bool fused = spec.fused_gate_up && place_.shard.size == 1;
    const int64_t gate_at = spec.fused_up_first ? ffn : 0, up_at = ffn - gate_at;
    const ValueId up = program.value(s + "up", ffn);
    add_linear(program, s + "up_proj", io.in, up, up_, up_bias_, hidden,
           fused ? ModuleMatch{module + n.gate_up, false, up_at, up_at + ffn}
                 : ModuleMatch{spec.fused_gate_up ? "" : module + n.up});
    if (spec.gated_mlp) {
      const ValueId gate = program.value(s + "gate", ffn);
      add_linear(program, s + "gate_proj", io.in, gate, gate_, gate_bias_, hidden,
             fused ? ModuleMatch{module + n.gate_up, false, gate_at, gate_at + ffn}
                   : ModuleMatch{spec.fused_gate_up ? "" : module + n.gate});
      if (spec.mlp_gate_scale != 1.0f)
        program.add<ScaleColumnsStep>(Step::Info{s + "gate_scale", {gate}, {gate}},
                                      std::vector<float>{spec.mlp_gate_scale});
      program.add<ActivationStep>(Step::Info{s + "act_mul", {gate, up}, {up}, {module + n.down, true}},
                                  spec.activation);
    } else if (spec.activation == Activation::kXielu) {
      program.add<XieluStep>(Step::Info{s + "act", {up}, {up}, {module + n.down, true}}, xielu_);
    } else {
      program.add<ActivationStep>(Step::Info{s + "act", {up}, {up}, {module + n.down, true}}, spec.activation);
    }
    add_linear(program, s + "down_proj", up, io.out, down_, down_bias_, ffn, {module + n.down});
    if (spec.mlp_down_scale != 1.0f)
      program.add<ScaleColumnsStep>(Step::Info{s + "down_scale", {io.out}, {io.out}},
                                    std::vector<float>{spec.mlp_down_scale});
  }

 private:
  // Apertus keeps xIELU's scalars under the MLP's act_fn: parameters a_p and a_n of shape [1],
  // buffers beta and eps of shape [].
  void visit_xielu(TensorVisitor& v, const std::string& prefix) {
    const auto first = [](const FloatBuffer& value) { return value.empty() ? 0.0f : value.data()[0]; };
    const float a_p = first(v.vector(prefix + "alpha_p", 1, TensorRole::kNorm));
    const float a_n = first(v.vector(prefix + "alpha_n", 1, TensorRole::kNorm));
    xielu_.beta = first(v.tensor(prefix + "beta", {}));
    xielu_.eps = first(v.tensor(prefix + "eps", {}));
    xielu_.alpha_p = softplus(a_p);
    xielu_.alpha_n = xielu_.beta + softplus(a_n);
  }

  BlockPlace place_;
  WeightMatrix gate_, up_, down_;
  FloatBuffer gate_bias_, up_bias_, down_bias_;
  Xielu xielu_;
};

const BlockKindRegistration registration("dense_mlp",
                                         [](const BlockPlace& place) { return std::make_unique<DenseMlp>(place); });

}  // namespace
}  // namespace canrun
