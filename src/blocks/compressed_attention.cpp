// The compressed attention block kind (deepseek_v4, CompressedAttentionSpec), as transformers'
// DeepseekV4Attention computes it. Positions run one after the other through the attention step,
// so each query sees exactly the window keys and the compressed keys of the windows closed at or
// before it: what transformers' masks give a prompt, and its caches a decode step. The state keeps
// the last `window` keys, the projected rows of the windows still open (two windows for the
// overlapping sparse ones) and every compressed key so far.
#include <algorithm>
#include <cmath>
#include <vector>

#include "blocks/block_kind.h"
#include "blocks/steps.h"
#include "kernels/top_k.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// One series of compressed keys: the projected kv and gate rows of the open windows (a ring by
// position) and the keys of the closed ones.
struct CompressedSeries {
  std::vector<float> kv, gate, keys;
};

// How one layer's compressed keys are made.
struct Compression {
  int64_t rate = 0;      // 0: none
  bool overlap = false;  // each key also covers the previous window's first halves
  int64_t dim = 0;       // a key's width
  int64_t ring() const { return overlap ? 2 * rate : rate; }
  int64_t row() const { return overlap ? 2 * dim : dim; }
  // The floats of a series for `capacity` positions: its open windows' kv and gate rows, its keys.
  int64_t floats(int64_t capacity) const { return rate == 0 ? 0 : 2 * ring() * row() + capacity / rate * dim; }
};

class CompressedAttentionState : public BlockState {
 public:
  CompressedAttentionState(int64_t window, int64_t dim, const Compression& main_how, const Compression& index_how,
                           int64_t capacity)
      : window_keys(static_cast<size_t>(std::min(window, capacity) * dim)),
        main(sized(main_how, capacity)),
        index(sized(index_how, capacity)) {}
  static int64_t bytes_for(int64_t window, int64_t dim, const Compression& main_how, const Compression& index_how,
                           int64_t capacity) {
    const int64_t floats = std::min(window, capacity) * dim + main_how.floats(capacity) + index_how.floats(capacity);
    return floats * static_cast<int64_t>(sizeof(float));
  }
  int64_t bytes() const override {
    int64_t floats = static_cast<int64_t>(window_keys.size());
    for (const CompressedSeries* s : {&main, &index}) floats += s->kv.size() + s->gate.size() + s->keys.size();
    return floats * static_cast<int64_t>(sizeof(float));
  }

  std::vector<float> window_keys;  // ring by position, of the window or the capacity if fewer
  CompressedSeries main, index;

 private:
  static CompressedSeries sized(const Compression& how, int64_t capacity) {
    CompressedSeries series;
    if (how.rate == 0) return series;
    series.kv.resize(static_cast<size_t>(how.ring() * how.row()));
    series.gate.resize(static_cast<size_t>(how.ring() * how.row()));
    series.keys.resize(static_cast<size_t>(capacity / how.rate * how.dim));
    return series;
  }
};

// A rotation's cos and sin per frequency at each position, times the rope's attention factor.
struct Angles {
  std::vector<float> inverse_frequencies;
  float factor = 1.0f;
  void at(int64_t position, std::vector<float>& cos, std::vector<float>& sin) const {
    const size_t n = inverse_frequencies.size();
    cos.resize(n);
    sin.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const float angle = static_cast<float>(position) * inverse_frequencies[i];
      cos[i] = std::cos(angle) * factor;
      sin[i] = std::sin(angle) * factor;
    }
  }
};

Angles angles_of(const RopeSpec& rope) {
  return {rope_inverse_frequencies(rope), static_cast<float>(rope.attention_factor)};
}

struct SeriesWeights {
  FloatBuffer position_bias;  // [rate, row]
  NormWeights norm;
};

// inputs {q [tokens, heads * head_dim], kv [tokens, head_dim], and on compressed layers the
// compressor's kv and gate rows; with an indexer also its kv and gate rows, queries
// [tokens, index_heads * index_dim] and head weights [tokens, index_heads]}, outputs
// {context [tokens, heads * head_dim]}.
class CompressedAttentionStep : public Step {
 public:
  CompressedAttentionStep(Info info, int slot, const DecoderSpec& spec, Compression main, Compression index,
                          const SeriesWeights& main_weights, const SeriesWeights& index_weights,
                          const FloatBuffer& sinks, Angles layer_angles, Angles compressed_angles)
      : Step(std::move(info)), slot_(slot), spec_(spec), main_(main), index_(index), main_weights_(main_weights),
        index_weights_(index_weights), sinks_(sinks), layer_angles_(std::move(layer_angles)),
        compressed_angles_(std::move(compressed_angles)) {}
  std::string_view kind() const override { return "compressed_attention"; }
  // Each query's scores and weighted sum over at most the window's keys and the compressed keys it
  // sees, and its indexer's scores over every compressed key.
  StepCost cost(const Program&, const RunShape& shape) const override {
    const CompressedAttentionSpec& ca = spec_.compressed;
    const int64_t entries = main_.rate > 0 ? shape.positions / main_.rate : 0;
    const int64_t seen = std::min(ca.window, shape.positions) + (index_.rate > 0 ? std::min(ca.index_topk, entries)
                                                                                  : entries);
    const int64_t scored = index_.rate > 0 ? entries * ca.index_heads * ca.index_head_dim : 0;
    return {2 * shape.tokens * (2 * spec_.num_heads * spec_.head_dim * seen + scored), 0};
  }

  void run(StepContext& c) const override {
    CompressedAttentionState& state = c.state().get<CompressedAttentionState>(slot_);
    const CompressedAttentionSpec& ca = spec_.compressed;
    const int64_t heads = spec_.num_heads, dim = spec_.head_dim, rope = ca.rope_dim, nope = dim - rope;
    float* q_all = c.value(inputs()[0]);
    float* kv_all = c.value(inputs()[1]);
    float* context = c.value(outputs()[0]);
    std::vector<float> cos, sin, neg_sin, logits, probs;
    std::vector<int32_t> chosen;
    const int64_t ring = static_cast<int64_t>(state.window_keys.size()) / dim;
    for (int64_t t = 0; t < c.count(); ++t) {
      const int64_t position = c.start() + t;
      float* q = q_all + t * heads * dim;
      float* key = kv_all + t * dim;
      layer_angles_.at(position, cos, sin);
      c.kernels().rotary_pairs(q + nope, heads, dim, rope, cos.data(), sin.data());
      c.kernels().rotary_pairs(key + nope, 1, dim, rope, cos.data(), sin.data());
      std::copy(key, key + dim, state.window_keys.data() + position % ring * dim);
      int64_t entries = 0;
      if (main_.rate > 0) {
        entries = add_row(c, state.main, main_, main_weights_, 2, t, position);
        if (index_.rate > 0) {
          add_row(c, state.index, index_, index_weights_, 4, t, position);
          chosen = choose(c, state.index, t, position, entries);
        } else {
          chosen.resize(static_cast<size_t>(entries));
          for (int64_t e = 0; e < entries; ++e) chosen[static_cast<size_t>(e)] = static_cast<int32_t>(e);
        }
      }
      // The window's keys, oldest first, then the compressed keys this query sees.
      const int64_t first = std::max<int64_t>(0, position - ca.window + 1);
      std::vector<const float*> keys;
      for (int64_t p = first; p <= position; ++p) keys.push_back(state.window_keys.data() + p % ring * dim);
      for (int32_t e : chosen) keys.push_back(state.main.keys.data() + e * dim);
      const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
      const int64_t n = static_cast<int64_t>(keys.size());
      logits.resize(static_cast<size_t>(n + 1));
      for (int64_t h = 0; h < heads; ++h) {
        const float* qh = q + h * dim;
        for (int64_t k = 0; k < n; ++k) logits[k] = dot(qh, keys[k], dim) * scale;
        logits[n] = sinks_.data()[h];  // joins the softmax, adds no value
        c.kernels().softmax(logits.data(), n + 1);
        float* out = context + (t * heads + h) * dim;
        std::fill_n(out, dim, 0.0f);
        for (int64_t k = 0; k < n; ++k) c.kernels().add_scaled(out, keys[k], dim, logits[k]);
      }
      // The output's rope part rotated back by the query's position.
      neg_sin.resize(sin.size());
      std::transform(sin.begin(), sin.end(), neg_sin.begin(), [](float s) { return -s; });
      c.kernels().rotary_pairs(context + t * heads * dim + nope, heads, dim, rope, cos.data(), neg_sin.data());
    }
  }

 private:
  static float dot(const float* a, const float* b, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }

  // Keeps token t's kv and gate rows (inputs `first` and `first + 1`) and, when its window
  // closes, makes that window's key. Returns the number of keys made so far.
  int64_t add_row(StepContext& c, CompressedSeries& series, const Compression& how, const SeriesWeights& weights,
                  size_t first, int64_t t, int64_t position) const {
    const int64_t row = how.row(), slot = position % how.ring();
    const float* kv = c.value(inputs()[first]) + t * row;
    const float* gate = c.value(inputs()[first + 1]) + t * row;
    std::copy(kv, kv + row, series.kv.data() + slot * row);
    const float* bias = weights.position_bias.data() + position % how.rate * row;
    for (int64_t i = 0; i < row; ++i) series.gate[static_cast<size_t>(slot * row + i)] = gate[i] + bias[i];
    const int64_t made = (position + 1) / how.rate;
    if ((position + 1) % how.rate == 0) make_key(c, series, how, weights, made - 1);
    return made;
  }

  // Key w: per channel, the softmax over the window's rows (and the previous window's first
  // halves) of their gates, weighting their kv; RMSNorm'd, rotated at position w * rate.
  void make_key(StepContext& c, CompressedSeries& series, const Compression& how, const SeriesWeights& weights,
                int64_t w) const {
    const int64_t dim = how.dim, row = how.row(), rate = how.rate;
    // (ring slot, column offset) of each row that takes part.
    std::vector<std::pair<int64_t, int64_t>> parts;
    if (how.overlap && w > 0)
      for (int64_t j = 0; j < rate; ++j) parts.emplace_back(((w - 1) * rate + j) % how.ring(), 0);
    for (int64_t j = 0; j < rate; ++j) parts.emplace_back((w * rate + j) % how.ring(), how.overlap ? dim : 0);
    std::vector<float> key(static_cast<size_t>(dim)), gates(parts.size());
    for (int64_t d = 0; d < dim; ++d) {
      for (size_t i = 0; i < parts.size(); ++i) gates[i] = series.gate[parts[i].first * row + parts[i].second + d];
      c.kernels().softmax(gates.data(), static_cast<int64_t>(gates.size()));
      float sum = 0.0f;
      for (size_t i = 0; i < parts.size(); ++i) sum += series.kv[parts[i].first * row + parts[i].second + d] * gates[i];
      key[d] = sum;
    }
    float* stored = series.keys.data() + w * dim;
    c.kernels().rms_norm(key.data(), weights.norm.weight.data(), 1, dim, spec_.norm.eps, stored);
    std::vector<float> cos, sin;
    compressed_angles_.at(w * rate, cos, sin);
    const int64_t rope = spec_.compressed.rope_dim;
    c.kernels().rotary_pairs(stored + dim - rope, 1, dim, rope, cos.data(), sin.data());
  }

  // The indexer's choice for token t among the `entries` compressed keys: the index_topk with the
  // highest sum over its heads of weight * relu(q . key), q rotated at the token's position.
  std::vector<int32_t> choose(StepContext& c, const CompressedSeries& series, int64_t t, int64_t position,
                              int64_t entries) const {
    const CompressedAttentionSpec& ca = spec_.compressed;
    const int64_t heads = ca.index_heads, dim = ca.index_head_dim, rope = ca.rope_dim;
    float* q = c.value(inputs()[6]) + t * heads * dim;
    const float* weights = c.value(inputs()[7]) + t * heads;
    std::vector<float> cos, sin;
    compressed_angles_.at(position, cos, sin);
    c.kernels().rotary_pairs(q + dim - rope, heads, dim, rope, cos.data(), sin.data());
    const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(dim));
    const float head_scale = 1.0f / std::sqrt(static_cast<float>(heads));
    std::vector<float> scores(static_cast<size_t>(entries), 0.0f);
    for (int64_t e = 0; e < entries; ++e)
      for (int64_t h = 0; h < heads; ++h) {
        const float relu = std::max(0.0f, dot(q + h * dim, series.keys.data() + e * dim, dim));
        scores[e] += relu * softmax_scale * (weights[h] * head_scale);
      }
    std::vector<int32_t> kept = top_k_indices(scores, std::min(ca.index_topk, entries));
    std::sort(kept.begin(), kept.end());
    return kept;
  }

  int slot_;
  const DecoderSpec& spec_;
  Compression main_, index_;
  const SeriesWeights& main_weights_;
  const SeriesWeights& index_weights_;
  const FloatBuffer& sinks_;
  Angles layer_angles_, compressed_angles_;
};

class CompressedAttention : public Block {
 public:
  explicit CompressedAttention(const BlockPlace& place) : place_(place) {
    const CompressedAttentionSpec& ca = place.spec.compressed;
    const auto layer = static_cast<size_t>(place.layer);
    main_ = {ca.rates[layer], ca.indexed[layer], place.spec.head_dim};
    if (ca.indexed[layer]) index_ = {ca.rates[layer], true, ca.index_head_dim};
  }

  // The checkpoint's names are DeepSeek's own (transformers renames them as it loads). Its one key
  // head goes to the first worker of a sharded run with every query head; the others hold nothing.
  void visit(TensorVisitor& v) override {
    if (!has_heads()) return;
    const DecoderSpec& spec = place_.spec;
    const CompressedAttentionSpec& ca = spec.compressed;
    const std::string p = place_.tensors + "attn.";
    const int64_t hidden = spec.hidden_size, heads = spec.num_heads, dim = spec.head_dim;
    sinks_ = v.vector(p + "attn_sink", heads, TensorRole::kBias);
    if (main_.rate > 0) main_weights_ = visit_series(v, p + "compressor.", main_, main_kv_, main_gate_);
    if (index_.rate > 0) {
      const std::string ip = p + "indexer.";
      index_weights_ = visit_series(v, ip + "compressor.", index_, index_kv_, index_gate_);
      index_head_weights_ = v.matrix(ip + "weights_proj", ca.index_heads, hidden);
      index_q_ = v.matrix(ip + "wq_b", ca.index_heads * ca.index_head_dim, ca.q_lora_rank);
    }
    kv_norm_ = visit_norm(v, spec.norm, p + "norm", dim);
    q_a_norm_ = visit_norm(v, spec.norm, p + "q_norm", ca.q_lora_rank);
    kv_ = v.matrix(p + "wkv", dim, hidden);
    const int64_t group_in = heads * dim / ca.o_groups;
    o_a_ = v.matrix(p + "wo_a", ca.o_groups * ca.o_lora_rank, group_in);
    o_b_ = v.matrix(p + "wo_b", hidden, ca.o_groups * ca.o_lora_rank);
    q_a_ = v.matrix(p + "wq_a", ca.q_lora_rank, hidden);
    q_b_ = v.matrix(p + "wq_b", heads * dim, ca.q_lora_rank);
    o_a_groups_.resize(static_cast<size_t>(ca.o_groups));
    if (!o_a_.empty())
      for (int64_t g = 0; g < ca.o_groups; ++g)
        o_a_groups_[static_cast<size_t>(g)] = o_a_.slice_rows(g * ca.o_lora_rank, ca.o_lora_rank);
    ones_.weight = FloatBuffer::owning(std::vector<float>(static_cast<size_t>(dim), 1.0f));
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    if (!has_heads()) {  // a worker without the key head adds nothing
      program.add<ZeroStep>(Step::Info{place_.steps + "attention_zero", {}, {io.out}});
      return;
    }
    const DecoderSpec& spec = place_.spec;
    const CompressedAttentionSpec& ca = spec.compressed;
    const std::string& s = place_.steps;
    const std::string module = place_.tensors + "self_attn.";
    const int64_t hidden = spec.hidden_size, heads = spec.num_heads, dim = spec.head_dim;
    const ValueId q_latent = program.value(s + "q_latent", ca.q_lora_rank), q = program.value(s + "q", heads * dim);
    add_linear(program, s + "q_a_proj", io.in, q_latent, q_a_, no_bias_, hidden, {module + "q_a_proj"});
    program.add<NormStep>(Step::Info{s + "q_a_norm", {q_latent}, {q_latent}, {module + "q_a_norm"}}, q_a_norm_,
                          spec.norm, ca.q_lora_rank);
    add_linear(program, s + "q_b_proj", q_latent, q, q_b_, no_bias_, ca.q_lora_rank, {module + "q_b_proj"});
    program.add<NormStep>(Step::Info{s + "q_b_norm", {q}, {q}}, ones_, spec.norm, dim);
    const ValueId kv = program.value(s + "kv", dim);
    add_linear(program, s + "kv_proj", io.in, kv, kv_, no_bias_, hidden, {module + "kv_proj"});
    program.add<NormStep>(Step::Info{s + "kv_norm", {kv}, {kv}, {module + "kv_norm"}}, kv_norm_, spec.norm, dim);
    std::vector<ValueId> inputs = {q, kv};
    if (main_.rate > 0) emit_series(program, io, s + "compressor.", module + "compressor.", main_, main_kv_,
                                    main_gate_, inputs);
    if (index_.rate > 0) {
      const std::string is = s + "indexer.", im = module + "compressor.indexer.";
      emit_series(program, io, is, im, index_, index_kv_, index_gate_, inputs);
      const ValueId iq = program.value(is + "q", ca.index_heads * ca.index_head_dim);
      const ValueId iw = program.value(is + "weights", ca.index_heads);
      add_linear(program, is + "q_b_proj", q_latent, iq, index_q_, no_bias_, ca.q_lora_rank, {im + "q_b_proj"});
      add_linear(program, is + "weights_proj", io.in, iw, index_head_weights_, no_bias_, hidden,
                 {im + "scorer.weights_proj"});
      inputs.push_back(iq);
      inputs.push_back(iw);
    }
    const int64_t window = ca.window;
    const Compression main = main_, index = index_;
    const int slot = program.state(
        {s + "compressed_cache",
         [=](const StateShape& shape) {
           return CompressedAttentionState::bytes_for(window, dim, main, index, shape.capacity);
         },
         [=](const StateShape& shape) -> std::unique_ptr<BlockState> {
           return std::make_unique<CompressedAttentionState>(window, dim, main, index, shape.capacity);
         }});
    const bool compressed = main_.rate > 0;
    const ValueId context = program.value(s + "context", heads * dim);
    program.add<CompressedAttentionStep>(Step::Info{s + "attention", inputs, {context}}, slot, spec, main_, index_,
                                         main_weights_, index_weights_, sinks_,
                                         angles_of(compressed ? ca.compress_rope : spec.rope),
                                         angles_of(ca.compress_rope));
    const ValueId grouped = program.value(s + "grouped", ca.o_groups * ca.o_lora_rank);
    for (size_t g = 0; g < o_a_groups_.size(); ++g)
      program.matrix(s + "o_a_proj." + std::to_string(g), o_a_groups_[g]);
    program.add<GroupedLinearStep>(Step::Info{s + "o_a_proj", {context}, {grouped}, {module + "o_a_proj"}},
                                   o_a_groups_);
    add_linear(program, s + "o_b_proj", grouped, io.out, o_b_, no_bias_, ca.o_groups * ca.o_lora_rank,
               {module + "o_b_proj"});
  }

 private:
  bool has_heads() const { return place_.layout.query_heads.count > 0; }

  // A compressor's (or its indexer's) kv and gate projections, position bias and key norm.
  SeriesWeights visit_series(TensorVisitor& v, const std::string& p, const Compression& how, WeightMatrix& kv,
                             WeightMatrix& gate) {
    const int64_t hidden = place_.spec.hidden_size;
    SeriesWeights w;
    w.position_bias = v.tensor(p + "ape", {how.rate, how.row()});
    w.norm = visit_norm(v, place_.spec.norm, p + "norm", how.dim);
    gate = v.matrix(p + "wgate", how.row(), hidden);
    kv = v.matrix(p + "wkv", how.row(), hidden);
    return w;
  }

  void emit_series(ProgramBuilder& program, const BlockIo& io, const std::string& s, const std::string& module,
                   const Compression& how, WeightMatrix& kv, WeightMatrix& gate, std::vector<ValueId>& inputs) {
    const int64_t hidden = place_.spec.hidden_size;
    const ValueId kv_rows = program.value(s + "kv", how.row()), gate_rows = program.value(s + "gate", how.row());
    add_linear(program, s + "kv_proj", io.in, kv_rows, kv, no_bias_, hidden, {module + "kv_proj"});
    add_linear(program, s + "gate_proj", io.in, gate_rows, gate, no_bias_, hidden, {module + "gate_proj"});
    inputs.push_back(kv_rows);
    inputs.push_back(gate_rows);
  }

  BlockPlace place_;
  Compression main_, index_;
  WeightMatrix q_a_, q_b_, kv_, o_a_, o_b_, main_kv_, main_gate_, index_kv_, index_gate_, index_q_, index_head_weights_;
  std::vector<WeightMatrix> o_a_groups_;
  NormWeights q_a_norm_, kv_norm_, ones_;
  SeriesWeights main_weights_, index_weights_;
  FloatBuffer sinks_, no_bias_;
};

const BlockKindRegistration registration("compressed_attention", [](const BlockPlace& place) {
  return std::make_unique<CompressedAttention>(place);
});

}  // namespace
}  // namespace canrun
