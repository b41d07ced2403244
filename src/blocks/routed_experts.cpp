// The routed-experts block kind: a router's softmax (optionally limited to the best groups) or
// deepseek_v3's biased sigmoid choice, top-k, optionally renormalised and scaled, then the
// weighted sum of those experts' gated MLPs (plain up/down MLPs for nemotron_h), plus an
// always-on shared expert (optionally scaled by sigmoid of a one-output gate). gpt-oss:
// router bias, softmax over the k chosen logits, 3-D experts (optionally MXFP4) with biases and
// the clamped SwiGLU. granitemoe, llama4 and gemma4: 3-D experts with gate and up one after
// the other (granitemoe's shared expert likewise); llama4 scales each expert's input by sigmoid
// of its logit; gemma4's router reads the normalised residual stream and scales each chosen
// weight by its expert's scale. deepseek_v4: sqrt(softplus) scores, and on its first layers the
// experts a token goes to are a fixed table's row for its id. Sharded, a rank computes only its
// own experts for the tokens routed to them and its columns of the shared expert: its output is
// this rank's partial sum.
#include <algorithm>
#include <cmath>
#include <limits>

#include "blocks/block_kind.h"
#include "blocks/steps.h"
#include "kernels/softplus.h"
#include "kernels/top_k.h"
#include "program/step_context.h"

namespace canrun {
namespace {

struct ExpertWeights {
  WeightMatrix gate, up, down;                // [out, in]
  FloatBuffer gate_bias, up_bias, down_bias;  // gpt-oss; deepseek_v2 shared experts with mlp_bias
};

// The intermediate columns `mine` of an expert's MLP: gate (unless `gated` is false) and up
// rows, down columns.
ExpertWeights visit_expert_mlp(TensorVisitor& v, bool gated, const std::string& gate, const std::string& up,
                               const std::string& down, int64_t hidden, int64_t ffn, IndexRange mine) {
  ExpertWeights w;
  if (gated) w.gate = v.matrix_part(gate, ffn, hidden, rows_of(mine, hidden));
  w.up = v.matrix_part(up, ffn, hidden, rows_of(mine, hidden));
  w.down = v.matrix_part(down, hidden, ffn, cols_of(hidden, mine));
  return w;
}

// deepseek_v2's group_limited_greedy: zeroes the probabilities outside the top_k_groups groups
// with the highest best probability.
void keep_top_groups(const MoeSpec& moe, float* probs) {
  const int64_t size = moe.num_experts / moe.groups;
  std::vector<float> best(static_cast<size_t>(moe.groups));
  for (int64_t g = 0; g < moe.groups; ++g) best[g] = *std::max_element(probs + g * size, probs + (g + 1) * size);
  const std::vector<int32_t> kept = top_k_indices(best, moe.top_k_groups);
  for (int64_t g = 0; g < moe.groups; ++g)
    if (std::find(kept.begin(), kept.end(), g) == kept.end()) std::fill_n(probs + g * size, size, 0.0f);
}

// deepseek_v3's noaux_tc choice over the biased scores `choice`: the top_k_groups groups with
// the largest sum of their two best scores stay eligible (the others' set to -inf), then the
// top-k experts.
std::vector<int32_t> choose_biased(const MoeSpec& moe, std::vector<float>& choice) {
  if (moe.groups > 0) {
    const int64_t size = moe.num_experts / moe.groups;
    std::vector<float> group_score(static_cast<size_t>(moe.groups));
    for (int64_t g = 0; g < moe.groups; ++g) {
      const std::vector<int32_t> best = top_k_indices({choice.data() + g * size, static_cast<size_t>(size)},
                                                      std::min<int64_t>(2, size));
      for (int32_t i : best) group_score[g] += choice[g * size + i];
    }
    const std::vector<int32_t> kept = top_k_indices(group_score, moe.top_k_groups);
    for (int64_t g = 0; g < moe.groups; ++g)
      if (std::find(kept.begin(), kept.end(), g) == kept.end())
        std::fill_n(choice.data() + g * size, size, -std::numeric_limits<float>::infinity());
  }
  return top_k_indices(choice, moe.top_k);
}

// inputs {x, router logits [tokens, experts]}, outputs {out}: each token's chosen experts, added
// in ascending expert order as transformers does.
class ExpertsStep : public Step {
 public:
  ExpertsStep(Info info, const MoeSpec& moe, Activation act, IndexRange mine, const std::vector<ExpertWeights>& experts,
              const FloatBuffer& score_bias, const FloatBuffer& expert_scale, const std::vector<int32_t>& hash_table)
      : Step(std::move(info)), moe_(moe), act_(act), mine_(mine), experts_(experts), score_bias_(score_bias),
        expert_scale_(expert_scale), hash_table_(hash_table) {}
  std::string_view kind() const override { return "experts"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    const ValueId x_id = inputs()[0];
    const int64_t hidden = c.width(x_id);
    const float* x = c.value(x_id);
    float* router = c.value(inputs()[1]);
    float* out = c.value(outputs()[0]);
    std::vector<float> expert_out(hidden), scaled_in(hidden), weight(static_cast<size_t>(moe_.top_k)), choice;
    std::vector<int32_t> chosen;
    for (int64_t t = 0; t < c.count(); ++t) {
      float* probs = router + t * moe_.num_experts;
      if (moe_.sigmoid_scores) {
        choice.resize(static_cast<size_t>(moe_.num_experts));
        const bool hashed = !hash_table_.empty();
        for (int64_t e = 0; e < moe_.num_experts; ++e) {
          probs[e] = moe_.sqrt_softplus_scores ? std::sqrt(softplus(probs[e])) : 1.0f / (1.0f + std::exp(-probs[e]));
          if (!hashed) choice[e] = probs[e] + score_bias_.data()[e];
        }
        if (hashed) {
          const int32_t* row = hash_table_.data() + static_cast<int64_t>(c.tokens()[t]) * moe_.top_k;
          chosen.assign(row, row + moe_.top_k);
        } else {
          chosen = choose_biased(moe_, choice);
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < moe_.top_k; ++j) sum += (weight[j] = probs[chosen[j]]);
        for (float& w : weight) w = (moe_.normalize_top_k ? w / (sum + 1e-20f) : w) * moe_.routed_scale;
      } else if (moe_.sigmoid_scaled_input) {
        // llama4: the input scaled per expert (below), the outputs added as they are.
        chosen = top_k_indices({probs, static_cast<size_t>(moe_.num_experts)}, moe_.top_k);
        for (int64_t j = 0; j < moe_.top_k; ++j) weight[j] = 1.0f / (1.0f + std::exp(-probs[chosen[j]]));
      } else if (moe_.softmax_after_top_k) {
        // gpt-oss: top-k of the logits, then the softmax over those k.
        chosen = top_k_indices({probs, static_cast<size_t>(moe_.num_experts)}, moe_.top_k);
        for (int64_t j = 0; j < moe_.top_k; ++j) weight[j] = probs[chosen[j]];
        c.kernels().softmax(weight.data(), moe_.top_k);
      } else {
        c.kernels().softmax(probs, moe_.num_experts);
        if (moe_.groups > 0) keep_top_groups(moe_, probs);
        if (moe_.softmax_score_bias) {
          choice.assign(probs, probs + moe_.num_experts);
          for (int64_t e = 0; e < moe_.num_experts; ++e) choice[e] += score_bias_.data()[e];
          chosen = top_k_indices(choice, moe_.top_k);
        } else {
          chosen = top_k_indices({probs, static_cast<size_t>(moe_.num_experts)}, moe_.top_k);
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < moe_.top_k; ++j) sum += (weight[j] = probs[chosen[j]]);
        if (moe_.normalize_top_k)
          for (float& w : weight) w /= std::max(sum, moe_.normalize_floor);
        if (moe_.routed_scale != 1.0f)
          for (float& w : weight) w *= moe_.routed_scale;
        if (moe_.per_expert_scale)
          for (int64_t j = 0; j < moe_.top_k; ++j) weight[j] *= expert_scale_.data()[chosen[j]];
      }
      std::vector<int32_t> order(chosen.begin(), chosen.end());
      std::sort(order.begin(), order.end());
      float* y = out + t * hidden;
      std::fill_n(y, hidden, 0.0f);
      for (int32_t e : order) {
        if (!mine_.contains(e)) continue;  // another rank's expert
        const int64_t slot = std::find(chosen.begin(), chosen.end(), e) - chosen.begin();
        const float* in = x + t * hidden;
        if (moe_.sigmoid_scaled_input) {
          for (int64_t i = 0; i < hidden; ++i) scaled_in[i] = in[i] * weight[slot];
          in = scaled_in.data();
        }
        expert(c, experts_[static_cast<size_t>(e - mine_.first)], in, expert_out.data());
        c.kernels().add_scaled(y, expert_out.data(), hidden, moe_.sigmoid_scaled_input ? 1.0f : weight[slot]);
      }
    }
  }

  StepCost cost(const Program& program, const RunShape& shape) const override {
    if (experts_.empty()) return {};
    const ExpertWeights& e = experts_.front();
    const int64_t per_row = e.gate.rows() * e.gate.cols() + e.up.rows() * e.up.cols() + e.down.rows() * e.down.cols();
    const auto element = static_cast<int64_t>(dtype_size(e.up.dtype()));
    return {2 * shape.tokens * moe_.top_k * per_row, per_row * element * static_cast<int64_t>(experts_.size())};
  }

 private:
  // y = down(act(gate(x)) * up(x)), or down(act(up(x))) without a gate, for one row, with the
  // expert's biases.
  void expert(StepContext& c, const ExpertWeights& w, const float* x, float* y) const {
    const int64_t ffn = w.up.rows();
    const auto bias = [](const FloatBuffer& b) { return b.empty() ? nullptr : b.data(); };
    std::vector<float> gate(ffn), up(ffn);
    c.kernels().linear(x, 1, w.up, bias(w.up_bias), c.choices(), up.data());
    if (w.gate.empty()) {
      c.kernels().activation(act_, up.data(), ffn, up.data());
      c.kernels().linear(up.data(), 1, w.down, bias(w.down_bias), c.choices(), y);
      return;
    }
    c.kernels().linear(x, 1, w.gate, bias(w.gate_bias), c.choices(), gate.data());
    if (moe_.limited_swiglu) limit_swiglu_inputs(moe_.swiglu_limit, gate.data(), up.data(), ffn);
    if (moe_.clamped_swiglu)
      c.kernels().clamped_swiglu(gate.data(), up.data(), ffn, moe_.swiglu_alpha, moe_.swiglu_limit, gate.data());
    else
      c.kernels().gated_activation(act_, gate.data(), up.data(), ffn, gate.data());
    c.kernels().linear(gate.data(), 1, w.down, bias(w.down_bias), c.choices(), y);
  }

  const MoeSpec& moe_;
  Activation act_;
  IndexRange mine_;
  const std::vector<ExpertWeights>& experts_;
  const FloatBuffer& score_bias_;  // sigmoid_scores, softmax_score_bias: e_score_correction_bias
  const FloatBuffer& expert_scale_;  // per_expert_scale
  const std::vector<int32_t>& hash_table_;  // [vocab, top_k] on a hash-routed layer, else empty
};

// inputs {x, shared expert output}, outputs {out}: out += sigmoid(gate . x) * shared per token
// (qwen2_moe's shared_expert_gate), or out += shared without a gate matrix.
class SharedExpertAddStep : public Step {
 public:
  SharedExpertAddStep(Info info, const WeightMatrix& gate) : Step(std::move(info)), gate_(gate) {}
  std::string_view kind() const override { return "shared_expert_add"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    const ValueId x_id = inputs()[0];
    const int64_t hidden = c.width(x_id);
    for (int64_t t = 0; t < c.count(); ++t) {
      float gate = 1.0f;
      if (!gate_.empty()) {
        float logit = 0;
        c.kernels().linear(c.value(x_id) + t * hidden, 1, gate_, nullptr, c.choices(), &logit);
        gate = 1.0f / (1.0f + std::exp(-logit));
      }
      c.kernels().add_scaled(c.value(outputs()[0]) + t * hidden, c.value(inputs()[1]) + t * hidden, hidden, gate);
    }
  }

 private:
  const WeightMatrix& gate_;
};

class RoutedExperts : public Block {
 public:
  explicit RoutedExperts(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const MoeSpec& moe = spec.moe;
    const std::string& p = place_.tensors;
    const int64_t hidden = spec.hidden_size;
    router_ = v.plain_matrix(p + n.router + ".weight", moe.num_experts, hidden);
    if (moe.router_bias) router_bias_ = v.vector(p + n.router + ".bias", moe.num_experts, TensorRole::kBias);
    if (hash_routed())
      hash_table_ = v.indices(p + n.router + ".tid2eid", {spec.vocab_size, moe.top_k}, moe.num_experts);
    else if (moe.sigmoid_scores)
      score_bias_ = v.vector(p + n.score_bias, moe.num_experts, TensorRole::kBias);
    else if (moe.softmax_score_bias)
      score_bias_ = v.tensor(p + n.score_bias, {1, moe.num_experts});
    if (moe.router_input_norm) visit_router_norm(v);
    if (moe.per_expert_scale) expert_scale_ = v.vector(p + n.per_expert_scale, moe.num_experts, TensorRole::kNorm);
    if (moe.fused_3d_experts) return visit_fused_experts(v, p + n.experts + ".");
    if (moe.stacked != MoeSpec::Stacked::kNone) {
      visit_stacked_experts(v);
    } else {
      for (int64_t e = place_.layout.experts.first; e < place_.layout.experts.end(); ++e) {
        const std::string ep = p + n.experts + "." + std::to_string(e) + ".";
        experts_.push_back(visit_expert_mlp(v, moe.gated_experts, ep + n.expert_gate, ep + n.expert_up,
                                            ep + n.expert_down, hidden, moe.expert_ffn, {0, moe.expert_ffn}));
      }
    }
    if (moe.shared_ffn == 0) return;
    const std::string sp = p + n.shared_expert + ".";
    const IndexRange mine = place_.layout.shared_ffn;
    if (moe.stacked == MoeSpec::Stacked::kRows) return visit_stacked_shared_expert(v, sp, mine);
    shared_ = visit_expert_mlp(v, moe.gated_experts, sp + n.expert_gate, sp + n.expert_up, sp + n.expert_down,
                               hidden, moe.shared_ffn, mine);
    if (spec.mlp_bias) {
      // deepseek_v2's shared experts are its dense MLP class, biases included.
      shared_.gate_bias = slice(v.vector(sp + n.expert_gate + ".bias", moe.shared_ffn, TensorRole::kBias), mine);
      shared_.up_bias = slice(v.vector(sp + n.expert_up + ".bias", moe.shared_ffn, TensorRole::kBias), mine);
      shared_.down_bias = bias_if(v, place_.shard.rank == 0, sp + n.expert_down, hidden);
    }
    if (moe.shared_expert_gate) shared_gate_ = v.plain_matrix(p + n.shared_expert_gate + ".weight", 1, hidden);
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const MoeSpec& moe = spec.moe;
    const std::string& s = place_.steps;
    const std::string& module = place_.tensors;
    const int64_t hidden = spec.hidden_size;
    // The experts' module in transformers holds the router ("mlp" of "mlp.gate").
    const std::string moe_module = module + spec.names.router.substr(0, spec.names.router.rfind('.'));
    const ValueId router = program.value(s + "router", moe.num_experts);
    ValueId router_in = io.in;
    if (moe.router_input_norm) {
      router_in = program.value(s + "router_in", hidden);
      program.add<NormStep>(Step::Info{s + "router_norm", {io.residual}, {router_in}}, router_norm_,
                            NormSpec{NormKind::kRms, false, false, spec.norm.eps}, hidden);
    }
    add_linear(program, s + "router", router_in, router, router_, router_bias_, hidden, {module + spec.names.router});
    for (size_t e = 0; e < experts_.size(); ++e) {
      const std::string ep = s + "experts." + std::to_string(place_.layout.experts.first + static_cast<int64_t>(e));
      program.matrix(ep + ".gate", experts_[e].gate);
      program.matrix(ep + ".up", experts_[e].up);
      program.matrix(ep + ".down", experts_[e].down);
    }
    const bool shared = moe.shared_ffn > 0 && place_.layout.shared_ffn.count > 0;
    program.add<ExpertsStep>(Step::Info{s + "experts", {io.in, router}, {io.out}, {shared ? "" : moe_module}}, moe,
                             spec.activation, place_.layout.experts, experts_, score_bias_, expert_scale_, hash_table_);
    if (!shared) return;
    const int64_t ffn = place_.layout.shared_ffn.count;
    const std::string sp = s + "shared_expert.";
    const ValueId gate = moe.gated_experts ? program.value(sp + "gate", ffn) : -1;
    const ValueId up = program.value(sp + "up", ffn), out = program.value(sp + "out", hidden);
    if (moe.gated_experts) {
      add_linear(program, sp + "gate_proj", io.in, gate, shared_.gate, shared_.gate_bias, hidden);
      add_linear(program, sp + "up_proj", io.in, up, shared_.up, shared_.up_bias, hidden);
      program.add<ActivationStep>(Step::Info{sp + "act_mul", {gate, up}, {gate}}, spec.activation,
                                  moe.limited_swiglu ? &moe : nullptr);
    } else {
      add_linear(program, sp + "up_proj", io.in, up, shared_.up, shared_.up_bias, hidden);
      program.add<ActivationStep>(Step::Info{sp + "act", {up}, {up}}, spec.activation);
    }
    add_linear(program, sp + "down_proj", moe.gated_experts ? gate : up, out, shared_.down, shared_.down_bias, ffn);
    program.matrix(s + "shared_expert_gate", shared_gate_);
    program.add<SharedExpertAddStep>(Step::Info{s + "shared_expert_add", {io.in, out}, {io.out}, {moe_module}},
                                     shared_gate_);
  }

 private:
  bool hash_routed() const {
    const std::vector<bool>& hash = place_.spec.moe.hash_layers;
    return !hash.empty() && hash[static_cast<size_t>(place_.layer)];
  }

  // gpt-oss experts: gate_up_proj [E, hidden, 2 ffn] (x @ W, gate and up interleaved) and
  // down_proj [E, ffn, hidden] with biases; or, as published, MXFP4 "_blocks"/"_scales" holding
  // the transposed [E, 2 ffn, hidden] and [E, hidden, ffn].
  void visit_fused_experts(TensorVisitor& v, const std::string& p) {
    const DecoderSpec& spec = place_.spec;
    const int64_t experts = spec.moe.num_experts, hidden = spec.hidden_size, ffn = spec.moe.expert_ffn;
    const IndexRange mine = place_.layout.experts;
    FloatBuffer gate_up, down;
    bool transposed = false;  // true: per expert [out, in] already
    if (spec.moe.mxfp4) {
      gate_up = v.mxfp4(p + "gate_up_proj", experts, 2 * ffn, hidden, mine);
      down = v.mxfp4(p + "down_proj", experts, hidden, ffn, mine);
      transposed = true;
    } else {
      gate_up = v.stacked(p + "gate_up_proj", {experts, hidden, 2 * ffn}, mine);
      down = v.stacked(p + "down_proj", {experts, ffn, hidden}, mine);
    }
    const FloatBuffer gate_up_bias = v.stacked(p + "gate_up_proj_bias", {experts, 2 * ffn}, mine);
    const FloatBuffer down_bias = v.stacked(p + "down_proj_bias", {experts, hidden}, mine);
    if (gate_up.empty()) return;  // listing only
    for (int64_t e = mine.first; e < mine.end(); ++e) {
      const float* gu = gate_up.data() + e * hidden * 2 * ffn;
      const float* dn = down.data() + e * ffn * hidden;
      std::vector<float> gate(ffn * hidden), up(ffn * hidden), d(hidden * ffn);
      for (int64_t j = 0; j < ffn; ++j)
        for (int64_t i = 0; i < hidden; ++i) {
          gate[j * hidden + i] = transposed ? gu[(2 * j) * hidden + i] : gu[i * 2 * ffn + 2 * j];
          up[j * hidden + i] = transposed ? gu[(2 * j + 1) * hidden + i] : gu[i * 2 * ffn + 2 * j + 1];
        }
      for (int64_t o = 0; o < hidden; ++o)
        for (int64_t j = 0; j < ffn; ++j) d[o * ffn + j] = transposed ? dn[o * ffn + j] : dn[j * hidden + o];
      std::vector<float> gb(ffn), ub(ffn);
      for (int64_t j = 0; j < ffn; ++j) {
        gb[j] = gate_up_bias.data()[e * 2 * ffn + 2 * j];
        ub[j] = gate_up_bias.data()[e * 2 * ffn + 2 * j + 1];
      }
      ExpertWeights w;
      w.gate = WeightMatrix::f32(FloatBuffer::owning(std::move(gate)), ffn, hidden);
      w.up = WeightMatrix::f32(FloatBuffer::owning(std::move(up)), ffn, hidden);
      w.down = WeightMatrix::f32(FloatBuffer::owning(std::move(d)), hidden, ffn);
      w.gate_bias = FloatBuffer::owning(std::move(gb));
      w.up_bias = FloatBuffer::owning(std::move(ub));
      w.down_bias = FloatBuffer::owning(
          std::vector<float>(down_bias.data() + e * hidden, down_bias.data() + (e + 1) * hidden));
      experts_.push_back(std::move(w));
    }
  }

  // Two 3-D tensors for all experts (MoeSpec::stacked), gate then up: granitemoe's rows
  // [E, 2 ffn, hidden] and [E, hidden, ffn], or llama4's columns [E, hidden, 2 ffn] and
  // [E, ffn, hidden], which are x @ W.
  void visit_stacked_experts(TensorVisitor& v) {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const int64_t experts = spec.moe.num_experts, hidden = spec.hidden_size, ffn = spec.moe.expert_ffn;
    const bool rows = spec.moe.stacked == MoeSpec::Stacked::kRows;
    const std::string p = place_.tensors + n.experts + ".";
    const IndexRange mine = place_.layout.experts;
    const FloatBuffer gate_up = v.stacked(p + n.stacked_gate_up,
                                          rows ? std::vector<int64_t>{experts, 2 * ffn, hidden}
                                               : std::vector<int64_t>{experts, hidden, 2 * ffn}, mine);
    const FloatBuffer down = v.stacked(p + n.stacked_down,
                                       rows ? std::vector<int64_t>{experts, hidden, ffn}
                                            : std::vector<int64_t>{experts, ffn, hidden}, mine);
    if (gate_up.empty()) return;  // listing only
    for (int64_t e = mine.first; e < mine.end(); ++e) {
      const float* gu = gate_up.data() + e * 2 * ffn * hidden;
      const float* dn = down.data() + e * hidden * ffn;
      std::vector<float> gate(ffn * hidden), up(ffn * hidden), d(hidden * ffn);
      for (int64_t j = 0; j < ffn; ++j)
        for (int64_t i = 0; i < hidden; ++i) {
          gate[j * hidden + i] = rows ? gu[j * hidden + i] : gu[i * 2 * ffn + j];
          up[j * hidden + i] = rows ? gu[(ffn + j) * hidden + i] : gu[i * 2 * ffn + ffn + j];
        }
      for (int64_t o = 0; o < hidden; ++o)
        for (int64_t j = 0; j < ffn; ++j) d[o * ffn + j] = rows ? dn[o * ffn + j] : dn[j * hidden + o];
      ExpertWeights w;
      w.gate = WeightMatrix::f32(FloatBuffer::owning(std::move(gate)), ffn, hidden);
      w.up = WeightMatrix::f32(FloatBuffer::owning(std::move(up)), ffn, hidden);
      w.down = WeightMatrix::f32(FloatBuffer::owning(std::move(d)), hidden, ffn);
      experts_.push_back(std::move(w));
    }
  }

  // gemma4's router input: RMSNorm(x) * scale / sqrt(hidden), the two factors one weight.
  void visit_router_norm(TensorVisitor& v) {
    const int64_t hidden = place_.spec.hidden_size;
    const FloatBuffer scale = v.vector(place_.tensors + place_.spec.names.router_scale, hidden, TensorRole::kNorm);
    if (scale.empty()) return;  // listing only
    std::vector<float> weight(scale.data(), scale.data() + hidden);
    const float root = 1.0f / std::sqrt(static_cast<float>(hidden));
    for (float& w : weight) w *= root;
    router_norm_.weight = FloatBuffer::owning(std::move(weight));
  }

  // granitemoe's shared expert: gate and up in one projection, [gate; up] rows.
  void visit_stacked_shared_expert(TensorVisitor& v, const std::string& sp, IndexRange mine) {
    const WeightNames& n = place_.spec.names;
    const int64_t hidden = place_.spec.hidden_size, shared = place_.spec.moe.shared_ffn;
    const WeightMatrix gate_up = v.matrix(sp + n.expert_up, 2 * shared, hidden);
    shared_.down = v.matrix_part(sp + n.expert_down, hidden, shared, cols_of(hidden, mine));
    if (gate_up.empty()) return;  // listing only
    shared_.gate = gate_up.slice_rows(mine.first, mine.count);
    shared_.up = gate_up.slice_rows(shared + mine.first, mine.count);
  }

  BlockPlace place_;
  WeightMatrix router_, shared_gate_;
  FloatBuffer router_bias_, score_bias_, expert_scale_;
  NormWeights router_norm_;
  std::vector<ExpertWeights> experts_;
  ExpertWeights shared_;
  std::vector<int32_t> hash_table_;
};

const BlockKindRegistration registration("routed_experts",
                                         [](const BlockPlace& place) { return std::make_unique<RoutedExperts>(place); });

}  // namespace
}  // namespace canrun
