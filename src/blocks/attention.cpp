// The attention block kind: q/k/v projections (separate, or one fused projection split at
// load; or no v_proj, the keys serving as values), optional q/k norms (and a weightless value
// norm), rotary positions (or llama4's temperature tuning where none), the
// static KV cache, causal (optionally sliding-window or chunked, soft-capped, with sinks)
// attention, an optional sigmoid output gate (its values come out of q_proj beside each head's
// query) and the output projection. Over this rank's heads only: its output is this rank's
// partial sum of the output projection.
#include <algorithm>
#include <cmath>

#include "blocks/block_kind.h"
#include "blocks/cached_attention.h"
#include "blocks/relative_position_bias.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// Rotates the `count` rows of q and k from `table` (rotary_dim cos values, then as many sin, per row).
void rotate_rows(StepContext& c, float* q, float* k, const float* table, int64_t heads, int64_t kv_heads,
                 int64_t head_dim, int64_t rotary_dim, bool pairs) {
  const auto rotary = pairs ? c.kernels().rotary_pairs : c.kernels().rotary_halves;
  for (int64_t t = 0; t < c.count(); ++t) {
    const float* cos = table + t * rotary_dim;
    const float* sin = cos + rotary_dim / 2;
    rotary(q + t * heads * head_dim, heads, head_dim, rotary_dim, cos, sin);
    if (kv_heads > 0) rotary(k + t * kv_heads * head_dim, kv_heads, head_dim, rotary_dim, cos, sin);
  }
}

// inputs {q, k, rope table}, outputs {q, k}: the rotation alone, where the q/k norms come
// between it and the cache (qk_norm_after_rope); without kv heads, inputs {q, rope table} and
// outputs {q}: a layer attending to another layer's cached keys rotates its queries alone.
class RotaryStep : public Step {
 public:
  RotaryStep(Info info, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t rotary_dim, bool pairs)
      : Step(std::move(info)), heads_(heads), kv_heads_(kv_heads), head_dim_(head_dim), rotary_dim_(rotary_dim),
        pairs_(pairs) {}
  std::string_view kind() const override { return "rotary"; }

  void run(StepContext& c) const override {
    float* k = kv_heads_ > 0 ? c.value(inputs()[1]) : nullptr;
    rotate_rows(c, c.value(inputs()[0]), k, c.value(inputs().back()), heads_, kv_heads_, head_dim_, rotary_dim_,
                pairs_);
  }

 private:
  int64_t heads_, kv_heads_, head_dim_, rotary_dim_;
  bool pairs_;
};

// inputs {q, k, v, rope table}, outputs {q, k}: rotates q and k at their positions (when the
// layer rotates) and writes k and v (value_dim per head) into the cache.
class RotaryCacheWriteStep : public Step {
 public:
  RotaryCacheWriteStep(Info info, int slot, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t value_dim,
                       int64_t rotary_dim, bool pairs)
      : Step(std::move(info)), slot_(slot), heads_(heads), kv_heads_(kv_heads), head_dim_(head_dim),
        value_dim_(value_dim), rotary_dim_(rotary_dim), pairs_(pairs) {}
  std::string_view kind() const override { return "rotary_cache_write"; }

  void run(StepContext& c) const override {
    KvState& cache = c.state().get<KvState>(slot_);
    float* q = c.value(inputs()[0]);
    float* k = c.value(inputs()[1]);
    const float* v = c.value(inputs()[2]);
    if (inputs().size() > 3)
      rotate_rows(c, q, k, c.value(inputs()[3]), heads_, kv_heads_, head_dim_, rotary_dim_, pairs_);
    const int64_t k_width = kv_heads_ * head_dim_, v_width = kv_heads_ * value_dim_;
    for (int64_t t = 0; t < c.count(); ++t) {
      const int64_t position = c.start() + t;
      for (int64_t h = 0; h < kv_heads_; ++h) {
        cache.write_key(h, position, k + t * k_width + h * head_dim_, head_dim_);
        cache.write_value(h, position, v + t * v_width + h * value_dim_);
      }
    }
  }

 private:
  int slot_;
  int64_t heads_, kv_heads_, head_dim_, value_dim_, rotary_dim_;
  bool pairs_;
};

// inputs {q and gate [tokens, heads * 2 * dim], as [q_h; gate_h] per head}, outputs {q, gate
// [tokens, heads * dim]}.
class SplitHeadPairsStep : public Step {
 public:
  SplitHeadPairsStep(Info info, int64_t heads, int64_t dim) : Step(std::move(info)), heads_(heads), dim_(dim) {}
  std::string_view kind() const override { return "split_head_pairs"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    const float* both = c.value(inputs()[0]);
    float* q = c.value(outputs()[0]);
    float* gate = c.value(outputs()[1]);
    for (int64_t row = 0; row < c.count() * heads_; ++row) {
      std::copy_n(both + 2 * row * dim_, dim_, q + row * dim_);
      std::copy_n(both + (2 * row + 1) * dim_, dim_, gate + row * dim_);
    }
  }

 private:
  int64_t heads_, dim_;
};

// inputs {q}, outputs {q}: each query times its position's QueryTemperature factor.
class QueryTemperatureStep : public Step {
 public:
  QueryTemperatureStep(Info info, const QueryTemperature& temperature) : Step(std::move(info)), t_(temperature) {}
  std::string_view kind() const override { return "query_temperature"; }

  void run(StepContext& c) const override {
    float* q = c.value(outputs()[0]);
    const int64_t width = c.width(outputs()[0]);
    for (int64_t t = 0; t < c.count(); ++t) {
      const int64_t position = c.start() + t;
      const float factor =
          std::log1p(std::floor(static_cast<float>(position + t_.offset) / static_cast<float>(t_.floor))) * t_.scale +
          1.0f;
      for (int64_t i = 0; i < width; ++i) q[t * width + i] *= factor;
    }
  }

 private:
  QueryTemperature t_;
};

// Whether layer `layer` normalises q and k.
bool qk_norm_on(const DecoderSpec& spec, int64_t layer) {
  if (spec.qk_norm_kind == QkNorm::kNone) return false;
  return spec.qk_norm_layers.empty() || spec.qk_norm_layers[static_cast<size_t>(layer)];
}

class Attention : public Block {
 public:
  explicit Attention(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const std::string& p = place_.tensors;
    const int64_t hidden = spec.hidden_size, hd = head_dim(), vd = value_head_dim(spec, place_.layer);
    const int64_t kv_heads = layer_kv_heads(spec, place_.layer);
    const int64_t q_width = spec.num_heads * hd, kv_width = kv_heads * hd, v_width = kv_heads * vd;
    const IndexRange q_rows = head_range(place_.layout.query_heads, hd);
    const IndexRange kv_rows = head_range(place_.layout.kv_heads, hd);
    const IndexRange v_rows = head_range(place_.layout.kv_heads, vd);
    if (spec.attention_output_gate) {
      // q_proj's rows are [q_h; gate_h] per head.
      const IndexRange rows = head_range(place_.layout.query_heads, 2 * hd);
      q_ = v.matrix_part(p + n.q, 2 * q_width, hidden, rows_of(rows, hidden));
      k_ = v.matrix_part(p + n.k, kv_width, hidden, rows_of(kv_rows, hidden));
      v_ = v.matrix_part(p + n.v, kv_width, hidden, rows_of(kv_rows, hidden));
      q_bias_ = slice(bias_if(v, spec.qkv_bias, p + n.q, 2 * q_width), rows);
      k_bias_ = slice(bias_if(v, spec.qkv_bias, p + n.k, kv_width), kv_rows);
      v_bias_ = slice(bias_if(v, spec.qkv_bias, p + n.v, kv_width), kv_rows);
    } else if (spec.fused_qkv == FusedQkv::kNone) {
      const bool own_values = own_keys() && !layer_keys_as_values(spec, place_.layer);
      q_ = v.matrix_part(p + n.q, q_width, hidden, rows_of(q_rows, hidden));
      if (own_keys()) k_ = v.matrix_part(p + n.k, kv_width, hidden, rows_of(kv_rows, hidden));
      if (own_values) v_ = v.matrix_part(p + n.v, v_width, hidden, rows_of(v_rows, hidden));
      q_bias_ = slice(bias_if(v, spec.qkv_bias, p + n.q, q_width), q_rows);
      k_bias_ = slice(bias_if(v, spec.qkv_bias && own_keys(), p + n.k, kv_width), kv_rows);
      v_bias_ = slice(bias_if(v, spec.qkv_bias && own_values, p + n.v, v_width), v_rows);
    } else {
      visit_fused(v, q_rows, kv_rows);
    }
    if (layer_has_sinks(spec, place_.layer))
      sinks_ = slice(v.vector(p + n.sinks, spec.num_heads, TensorRole::kBias), place_.layout.query_heads);
    if (spec.relative_buckets > 0)
      position_bias_ = relative_position_bias(
          v.tensor(n.relative_attention_bias + ".weight", {spec.relative_buckets, spec.num_heads}), spec,
          place_.layout.query_heads);
    const IndexRange context_cols = head_range(place_.layout.query_heads, vd);
    o_ = v.matrix_part(p + n.o, hidden, spec.num_heads * vd, cols_of(hidden, context_cols));
    // A row-parallel output's bias is held by rank 0 alone, so the sum over ranks adds it once.
    o_bias_ = bias_if(v, spec.o_bias && place_.shard.rank == 0, p + n.o, hidden);
    if (spec.value_norm) value_norm_.weight = FloatBuffer::owning(std::vector<float>(static_cast<size_t>(vd), 1.0f));
    if (!qk_norm_on(spec, place_.layer)) return;
    if (spec.qk_norm_kind == QkNorm::kPerHead && spec.qk_norm_weights == QkNormWeights::kNone) {
      q_norm_.weight = FloatBuffer::owning(std::vector<float>(static_cast<size_t>(hd), 1.0f));
      k_norm_.weight = FloatBuffer::owning(std::vector<float>(static_cast<size_t>(hd), 1.0f));
    } else if (spec.qk_norm_kind == QkNorm::kPerHead && spec.qk_norm_weights != QkNormWeights::kShared) {
      q_norm_.weight = visit_head_norms(v, p + n.q_norm, spec.num_heads, place_.layout.query_heads);
      k_norm_.weight = visit_head_norms(v, p + n.k_norm, kv_heads, place_.layout.kv_heads);
    } else if (spec.qk_norm_kind == QkNorm::kPerHead) {
      q_norm_ = visit_norm(v, spec.qk_norm_spec, p + n.q_norm, hd);
      if (own_keys()) k_norm_ = visit_norm(v, spec.qk_norm_spec, p + n.k_norm, hd);
    } else if (spec.qk_norm_kind == QkNorm::kWhole) {
      q_norm_ = visit_norm(v, spec.qk_norm_spec, p + n.q_norm, q_width);
      k_norm_ = visit_norm(v, spec.qk_norm_spec, p + n.k_norm, kv_width);
    }
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const std::string& s = place_.steps;
    const std::string module = place_.tensors;  // transformers' module names are the tensors' prefixes
    const int64_t hd = head_dim(), hidden = spec.hidden_size;
    const int64_t heads = place_.layout.query_heads.count, kv_heads = place_.layout.kv_heads.count;
    if (heads == 0) {  // more ranks than kv heads: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "attention_zero", {}, {io.out}});
      return;
    }
    const WeightNames& n = spec.names;
    const int64_t vd = value_head_dim(spec, place_.layer);
    const int64_t q_width = heads * hd;
    const ValueId q = program.value(s + "q", q_width);
    ValueId gate = -1;
    if (spec.attention_output_gate) {
      const ValueId q_and_gate = program.value(s + "q_and_gate", 2 * q_width);
      gate = program.value(s + "gate", q_width);
      add_linear(program, s + "q_proj", io.in, q_and_gate, q_, q_bias_, hidden, {module + n.q});
      program.add<SplitHeadPairsStep>(Step::Info{s + "q_gate_split", {q_and_gate}, {q, gate}}, heads, hd);
    } else {
      add_linear(program, s + "q_proj", io.in, q, q_, q_bias_, hidden, fused_match(module, n.q, 0, q_width));
    }
    const bool rotates = io.rope >= 0 && layer_uses_rope(spec, place_.layer);
    const int64_t rotary_dim = rotates ? program.info(io.rope).width : 0;
    const int slot = own_keys() ? emit_keys_and_values(program, io, q, rotary_dim)
                                : emit_query_for_shared_keys(program, q, io.rope, rotary_dim);
    AttentionShape shape;
    shape.heads = heads;
    shape.kv_heads = kv_heads;
    shape.key_dim = hd;
    shape.value_dim = vd;
    shape.causal = spec.causal;
    shape.window = spec.sliding_window[static_cast<size_t>(place_.layer)];
    if (!spec.attention_chunk.empty()) shape.chunk = spec.attention_chunk[static_cast<size_t>(place_.layer)];
    shape.scale = spec.attention_scale > 0 ? spec.attention_scale : 1.0f / std::sqrt(static_cast<float>(hd));
    shape.softcap = spec.attn_softcap;
    if (spec.relative_buckets > 0) shape.bias_span = spec.max_positions;
    const ValueId context = program.value(s + "context", heads * vd);
    program.add<AttentionStep>(Step::Info{s + "attention", {q}, {context}, {gate >= 0 ? "" : module + n.o, true}},
                               slot, shape, sinks_, -1, spec.relative_buckets > 0 ? &position_bias_ : nullptr);
    if (gate >= 0)  // qwen3_5: the context times sigmoid(gate), per value
      program.add<ActivationStep>(Step::Info{s + "output_gate", {gate, context}, {context}, {module + n.o, true}},
                                  Activation::kSigmoid);
    add_linear(program, s + "o_proj", context, io.out, o_, o_bias_, heads * vd, {module + n.o});
  }

 private:
  // The layer's own k and v: projected, normed, the keys rotated (with q) and both written to
  // the layer's cache; returns the cache's slot.
  int emit_keys_and_values(ProgramBuilder& program, const BlockIo& io, ValueId q, int64_t rotary_dim) {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const std::string& s = place_.steps;
    const std::string& module = place_.tensors;
    const int64_t hd = head_dim(), hidden = spec.hidden_size, vd = value_head_dim(spec, place_.layer);
    const int64_t heads = place_.layout.query_heads.count, kv_heads = place_.layout.kv_heads.count;
    const int64_t q_width = heads * hd, kv_width = kv_heads * hd;
    const bool rotates = rotary_dim > 0;
    const ValueId k = program.value(s + "k", kv_width);
    const ValueId v = program.value(s + "v", kv_heads * vd);
    add_linear(program, s + "k_proj", io.in, k, k_, k_bias_, hidden, fused_match(module, n.k, q_width, kv_width));
    if (layer_keys_as_values(spec, place_.layer))
      program.add<CopyColumnsStep>(Step::Info{s + "keys_as_values", {k}, {v}}, 0);
    else
      add_linear(program, s + "v_proj", io.in, v, v_, v_bias_, hidden,
                 fused_match(module, n.v, q_width + kv_width, kv_width));
    if (spec.value_norm)
      program.add<NormStep>(Step::Info{s + "v_norm", {v}, {v}}, value_norm_, spec.qk_norm_spec, vd);
    if (spec.value_scale != 1.0f)
      program.add<ScaleSoftcapStep>(Step::Info{s + "value_scale", {v}, {v}}, spec.value_scale, 0.0f);
    // llama4 normalises after the rotation without weights, which commutes with it; a weighted
    // norm after the rotation (hunyuan) gets the rotation as a step of its own before it.
    const bool rotate_first = rotates && spec.qk_norm_after_rope;
    if (rotate_first)
      program.add<RotaryStep>(Step::Info{s + "rotary", {q, k, io.rope}, {q, k}}, heads, kv_heads, hd, rotary_dim,
                              spec.rope_interleaved);
    if (qk_norm_on(spec, place_.layer)) {
      const bool per_head = spec.qk_norm_kind == QkNorm::kPerHead;
      program.add<NormStep>(Step::Info{s + "q_norm", {q}, {q}, {module + n.q_norm}}, q_norm_, spec.qk_norm_spec,
                            per_head ? hd : q_width);
      program.add<NormStep>(Step::Info{s + "k_norm", {k}, {k}, {module + n.k_norm}}, k_norm_, spec.qk_norm_spec,
                            per_head ? hd : kv_width);
    }
    const int slot = declare_kv_cache(program, s + "kv_cache", kv_heads, hd, vd);
    add_query_temperature(program, q);
    std::vector<ValueId> rotary_inputs = {q, k, v};
    if (rotates && !rotate_first) rotary_inputs.push_back(io.rope);
    program.add<RotaryCacheWriteStep>(Step::Info{s + "rotary_cache_write", rotary_inputs, {q, k}}, slot, heads,
                                      kv_heads, hd, vd, rotary_dim, spec.rope_interleaved);
    return slot;
  }

  // gemma4's layers sharing an earlier layer's cache: only q is projected, normed and rotated.
  int emit_query_for_shared_keys(ProgramBuilder& program, ValueId q, ValueId rope, int64_t rotary_dim) {
    const DecoderSpec& spec = place_.spec;
    const std::string& s = place_.steps;
    const int64_t hd = head_dim(), heads = place_.layout.query_heads.count;
    if (qk_norm_on(spec, place_.layer))
      program.add<NormStep>(Step::Info{s + "q_norm", {q}, {q}, {place_.tensors + spec.names.q_norm}}, q_norm_,
                            spec.qk_norm_spec, spec.qk_norm_kind == QkNorm::kPerHead ? hd : heads * hd);
    add_query_temperature(program, q);
    if (rotary_dim > 0)
      program.add<RotaryStep>(Step::Info{s + "rotary", {q, rope}, {q}}, heads, 0, hd, rotary_dim,
                              spec.rope_interleaved);
    const std::string cache = layer_steps(layer_kv_source(spec, place_.layer)) + "kv_cache";
    const int slot = program.find_state(cache);
    if (slot < 0) fail(ErrorKind::kRuntime, s + "attention: no cache " + cache + " declared before it to share");
    return slot;
  }

  void add_query_temperature(ProgramBuilder& program, ValueId q) const {
    const DecoderSpec& spec = place_.spec;
    const QueryTemperature& temperature = spec.query_temperature;
    if (temperature.scale != 0 && !(temperature.layers_without_rope_only && layer_uses_rope(spec, place_.layer)))
      program.add<QueryTemperatureStep>(Step::Info{place_.steps + "query_temperature", {q}, {q}}, temperature);
  }

  bool own_keys() const { return layer_kv_source(place_.spec, place_.layer) < 0; }

  // A q or k norm's weights for `mine` of its `heads` heads, a row each (bias-free).
  FloatBuffer visit_head_norms(TensorVisitor& v, const std::string& name, int64_t heads, IndexRange mine) {
    const int64_t hd = head_dim();
    if (place_.spec.qk_norm_weights == QkNormWeights::kHeadRows)
      return slice(v.tensor(name + ".weight", {heads, hd}), head_range(mine, hd));
    std::vector<float> rows;
    for (int64_t h = 0; h < heads; ++h) {
      const FloatBuffer row = v.vector(name + ".norms." + std::to_string(h) + ".weight", hd, TensorRole::kNorm);
      if (mine.contains(h) && !row.empty()) rows.insert(rows.end(), row.data(), row.data() + hd);
    }
    return rows.empty() ? FloatBuffer() : FloatBuffer::owning(std::move(rows));
  }

  void visit_fused(TensorVisitor& v, IndexRange q_rows, IndexRange kv_rows) {
    const DecoderSpec& spec = place_.spec;
    const std::string name = place_.tensors + spec.names.qkv;
    const int64_t hd = head_dim(), q_width = spec.num_heads * hd, kv_width = spec.num_kv_heads * hd;
    const int64_t total = q_width + 2 * kv_width;
    const WeightMatrix fused = v.matrix(name, total, spec.hidden_size);
    const FloatBuffer fused_bias = bias_if(v, spec.qkv_bias, name, total);
    if (fused.empty()) return;  // listing only
    std::vector<IndexRange> q, k, val;
    if (spec.fused_qkv == FusedQkv::kConcat) {
      q.push_back(q_rows);
      k.push_back({q_width + kv_rows.first, kv_rows.count});
      val.push_back({q_width + kv_width + kv_rows.first, kv_rows.count});
    } else {  // per head [q_h; k_h; v_h], num_kv_heads == num_heads
      for (int64_t h = place_.layout.query_heads.first; h < place_.layout.query_heads.end(); ++h) {
        q.push_back({h * 3 * hd, hd});
        k.push_back({h * 3 * hd + hd, hd});
        val.push_back({h * 3 * hd + 2 * hd, hd});
      }
    }
    q_ = stack_rows(fused, q);
    k_ = stack_rows(fused, k);
    v_ = stack_rows(fused, val);
    q_bias_ = gather(fused_bias, q);
    k_bias_ = gather(fused_bias, k);
    v_bias_ = gather(fused_bias, val);
  }

  // The transformers module a projection's output is: its own, or columns of the fused one
  // (stacked [q; k; v] unsharded; per-head interleaving has no contiguous columns).
  ModuleMatch fused_match(const std::string& module, const std::string& own, int64_t first, int64_t width) const {
    const DecoderSpec& spec = place_.spec;
    if (spec.fused_qkv == FusedQkv::kNone) return {module + own};
    if (spec.fused_qkv == FusedQkv::kConcat && place_.shard.size == 1)
      return {module + spec.names.qkv, false, first, first + width};
    return {};
  }

  int64_t head_dim() const { return layer_head_dim(place_.spec, place_.layer); }

  BlockPlace place_;
  WeightMatrix q_, k_, v_, o_;
  FloatBuffer q_bias_, k_bias_, v_bias_, o_bias_;
  NormWeights q_norm_, k_norm_, value_norm_;
  FloatBuffer sinks_;
  FloatBuffer position_bias_;
};

const BlockKindRegistration registration("attention",
                                         [](const BlockPlace& place) { return std::make_unique<Attention>(place); });

}  // namespace
}  // namespace canrun
