// The Gated DeltaNet block kind (qwen3_5's and qwen3_next's linear attention, DeltaNetSpec): a
// recurrent state per value head instead of a KV cache, updated by the gated delta rule at each
// position (prefill runs the same recurrence, token by token), and a depthwise causal
// convolution over q, k and v before it. Its per-sequence state is both.
#include <cmath>
#include <memory>

#include "blocks/block_kind.h"
#include "blocks/causal_conv.h"
#include "blocks/recurrent_state.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// x / sqrt(sum x^2 + eps), as transformers' l2norm (eps 1e-6).
void l2_normalize(float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum + 1e-6));
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// inputs {qkv [tokens, 2 key_heads key_dim + value_heads value_dim], b, a [tokens, value_heads]},
// outputs {core [tokens, value_heads value_dim]}: the convolution, then the gated delta rule.
class DeltaRuleStep : public Step {
 public:
  DeltaRuleStep(Info info, const DeltaNetSpec& spec, int conv_slot, int delta_slot, const FloatBuffer& conv_weight,
                const FloatBuffer& a_log, const FloatBuffer& dt_bias)
      : Step(std::move(info)), spec_(spec), conv_slot_(conv_slot), delta_slot_(delta_slot),
        conv_weight_(conv_weight), a_log_(a_log), dt_bias_(dt_bias) {}
  std::string_view kind() const override { return "gated_delta_rule"; }

  void run(StepContext& c) const override {
    ConvState& conv = c.state().get<ConvState>(conv_slot_);
    float* states = c.state().get<RecurrentState>(delta_slot_).data();  // S [key_dim, value_dim] per value head
    const int64_t dk = spec_.key_dim, dv = spec_.value_dim, key_width = spec_.key_heads * dk;
    const int64_t channels = 2 * key_width + spec_.value_heads * dv, group = spec_.value_heads / spec_.key_heads;
    const float* qkv = c.value(inputs()[0]);
    const float* b = c.value(inputs()[1]);
    const float* a = c.value(inputs()[2]);
    float* out = c.value(outputs()[0]);
    const int64_t tokens = c.count(), value_heads = spec_.value_heads;
    const float query_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    // The convolution carries its inputs from one position to the next, so it runs position by
    // position; then each value head's recurrence runs on a thread of its own.
    std::vector<float> mixed(static_cast<size_t>(tokens * channels));
    for (int64_t t = 0; t < tokens; ++t) {
      float* q = mixed.data() + t * channels;
      causal_conv(conv, conv_weight_.data(), nullptr, spec_.conv_kernel, channels, c.start() + t, qkv + t * channels, q);
      c.kernels().activation(Activation::kSilu, q, channels, q);
      float* k = q + key_width;
      for (int64_t h = 0; h < spec_.key_heads; ++h) {
        l2_normalize(q + h * dk, dk);
        l2_normalize(k + h * dk, dk);
        for (int64_t i = 0; i < dk; ++i) q[h * dk + i] *= query_scale;
      }
    }
#pragma omp parallel for schedule(static) if (value_heads > 1)
    for (int64_t h = 0; h < value_heads; ++h) {
      std::vector<float> memory(static_cast<size_t>(dv));
      float* s = states + h * dk * dv;
      for (int64_t t = 0; t < tokens; ++t) {
        const float* qh = mixed.data() + t * channels + (h / group) * dk;
        const float* kh = qh + key_width;
        const float* vh = mixed.data() + t * channels + 2 * key_width + h * dv;
        const float beta = 1.0f / (1.0f + std::exp(-b[t * value_heads + h]));
        const float decay =
            std::exp(-std::exp(a_log_.data()[h]) * softplus(a[t * value_heads + h] + dt_bias_.data()[h]));
        for (int64_t i = 0; i < dk * dv; ++i) s[i] *= decay;
        std::fill(memory.begin(), memory.end(), 0.0f);
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) memory[j] += s[i * dv + j] * kh[i];
        for (int64_t j = 0; j < dv; ++j) memory[j] = (vh[j] - memory[j]) * beta;  // the delta
        float* y = out + (t * value_heads + h) * dv;
        std::fill_n(y, dv, 0.0f);
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) {
            s[i * dv + j] += kh[i] * memory[j];
            y[j] += s[i * dv + j] * qh[i];
          }
      }
    }
  }

  StepCost cost(const Program&, const RunShape& shape) const override {
    return {6 * shape.tokens * spec_.value_heads * spec_.key_dim * spec_.value_dim, 0};
  }

 private:
  const DeltaNetSpec& spec_;
  int conv_slot_, delta_slot_;
  const FloatBuffer& conv_weight_;  // [channels, kernel]
  const FloatBuffer& a_log_;
  const FloatBuffer& dt_bias_;
};

// Its four projections' outputs: [q (key heads); k (key heads); v (value heads)], z, b and a.
struct DeltaProjections {
  WeightMatrix qkv, z, b, a;
};

// Sharded, a rank holds whole key heads (deltanet_key_heads of the layout) with the value heads
// they serve: their q, k and v rows and convolution channels, their value heads' z, b, a, state
// and out_proj columns. Its output is this rank's partial sum of out_proj.
class GatedDeltaNet : public Block {
 public:
  explicit GatedDeltaNet(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const DeltaNetSpec& d = spec.deltanet;
    const std::string p = place_.tensors + "linear_attn.";
    const int64_t hidden = spec.hidden_size, value_width = d.value_heads * d.value_dim;
    const int64_t key_width = d.key_heads * d.key_dim, channels = 2 * key_width + value_width;
    const IndexRange keys = place_.layout.deltanet_key_heads;
    const int64_t ratio = d.value_heads / d.key_heads;
    const IndexRange values{keys.first * ratio, keys.count * ratio};
    mine_ = d;
    mine_.key_heads = keys.count;
    mine_.value_heads = values.count;
    const std::vector<IndexRange> qkv_rows = {head_range(keys, d.key_dim),
                                              {key_width + keys.first * d.key_dim, keys.count * d.key_dim},
                                              {2 * key_width + values.first * d.value_dim, values.count * d.value_dim}};
    conv_weight_ = gather(v.tensor(p + "conv1d.weight", {channels, 1, d.conv_kernel}), qkv_rows, d.conv_kernel);
    dt_bias_ = slice(v.vector(p + "dt_bias", d.value_heads, TensorRole::kBias), values);
    a_log_ = slice(v.vector(p + "A_log", d.value_heads, TensorRole::kBias), values);
    norm_ = visit_norm(v, norm_spec(), p + "norm", d.value_dim);
    out_ = v.matrix_part(p + "out_proj", hidden, value_width, cols_of(hidden, head_range(values, d.value_dim)));
    DeltaProjections all;
    if (d.grouped_projections) {
      all = visit_grouped(v, p);
    } else {
      all.qkv = v.matrix(p + "in_proj_qkv", channels, hidden);
      all.z = v.matrix(p + "in_proj_z", value_width, hidden);
      all.b = v.matrix(p + "in_proj_b", d.value_heads, hidden);
      all.a = v.matrix(p + "in_proj_a", d.value_heads, hidden);
    }
    if (all.qkv.empty() || keys.count == 0) return;  // listing only, or no heads here
    qkv_ = stack_rows(all.qkv, qkv_rows);
    z_ = stack_rows(all.z, {head_range(values, d.value_dim)});
    b_ = stack_rows(all.b, {values});
    a_ = stack_rows(all.a, {values});
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DeltaNetSpec& d = mine_;
    const std::string s = place_.steps + "linear_attn.", module = place_.tensors + "linear_attn.";
    if (d.key_heads == 0) {  // more ranks than key heads: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "zero", {}, {io.out}});
      return;
    }
    const int64_t hidden = place_.spec.hidden_size, value_width = d.value_heads * d.value_dim;
    const int64_t channels = 2 * d.key_heads * d.key_dim + value_width;
    const ValueId qkv = program.value(s + "qkv", channels), z = program.value(s + "z", value_width);
    const ValueId b = program.value(s + "b", d.value_heads), a = program.value(s + "a", d.value_heads);
    // Module outputs to compare with, for the whole layer and qwen3_5's ungrouped projections.
    const bool whole = place_.shard.size == 1;
    const auto module_of = [&](const char* name) {
      return whole && !d.grouped_projections ? module + name : std::string();
    };
    add_linear(program, s + "in_proj_qkv", io.in, qkv, qkv_, no_bias_, hidden, {module_of("in_proj_qkv")});
    add_linear(program, s + "in_proj_z", io.in, z, z_, no_bias_, hidden, {module_of("in_proj_z")});
    add_linear(program, s + "in_proj_b", io.in, b, b_, no_bias_, hidden, {module_of("in_proj_b")});
    add_linear(program, s + "in_proj_a", io.in, a, a_, no_bias_, hidden, {module_of("in_proj_a")});
    const int conv_slot = declare_conv_state(program, place_.steps + "conv_state", d.conv_kernel, channels);
    const int delta_slot =
        declare_recurrent_state(program, place_.steps + "delta_state", d.value_heads * d.key_dim * d.value_dim);
    const ValueId core = program.value(s + "core", value_width);
    program.add<DeltaRuleStep>(
        Step::Info{s + "delta_rule", {qkv, b, a}, {core}, {whole ? module + "norm" : std::string(), true}}, d,
        conv_slot, delta_slot, conv_weight_, a_log_, dt_bias_);
    // Qwen3_5RMSNormGated: the RMSNorm of each head times silu(z).
    program.add<NormStep>(Step::Info{s + "norm", {core}, {core}}, norm_, norm_spec(), d.value_dim);
    program.add<ActivationStep>(
        Step::Info{s + "gate", {z, core}, {core}, {whole ? module + "out_proj" : std::string(), true}},
        Activation::kSilu);
    add_linear(program, s + "out_proj", core, io.out, out_, no_bias_, value_width, {module + "out_proj"});
  }

 private:
  // qwen3_next's projections, regrouped at load into qwen3_5's: all queries, then all keys, then
  // all values (value heads in group order), and z, b, a alike.
  DeltaProjections visit_grouped(TensorVisitor& v, const std::string& p) {
    const DeltaNetSpec& d = place_.spec.deltanet;
    const int64_t hidden = place_.spec.hidden_size, ratio = d.value_heads / d.key_heads;
    const int64_t values = ratio * d.value_dim, qkvz_group = 2 * d.key_dim + 2 * values;
    const WeightMatrix qkvz = v.matrix(p + "in_proj_qkvz", d.key_heads * qkvz_group, hidden);
    const WeightMatrix ba = v.matrix(p + "in_proj_ba", d.key_heads * 2 * ratio, hidden);
    if (qkvz.empty()) return {};  // listing only
    const auto regroup = [&](const WeightMatrix& m, int64_t group_rows, std::initializer_list<IndexRange> parts) {
      std::vector<IndexRange> rows;
      for (const IndexRange& part : parts)
        for (int64_t g = 0; g < d.key_heads; ++g) rows.push_back({g * group_rows + part.first, part.count});
      return stack_rows(m, rows);
    };
    return {regroup(qkvz, qkvz_group, {{0, d.key_dim}, {d.key_dim, d.key_dim}, {2 * d.key_dim, values}}),
            regroup(qkvz, qkvz_group, {{2 * d.key_dim + values, values}}), regroup(ba, 2 * ratio, {{0, ratio}}),
            regroup(ba, 2 * ratio, {{ratio, ratio}})};
  }

  NormSpec norm_spec() const { return NormSpec{NormKind::kRms, false, false, place_.spec.deltanet.norm_eps}; }

  BlockPlace place_;
  DeltaNetSpec mine_;  // this rank's key and value heads
  WeightMatrix qkv_, z_, b_, a_, out_;
  FloatBuffer conv_weight_, dt_bias_, a_log_, no_bias_;
  NormWeights norm_;
};

const BlockKindRegistration registration("gated_deltanet",
                                         [](const BlockPlace& place) { return std::make_unique<GatedDeltaNet>(place); });

}  // namespace
}  // namespace canrun
