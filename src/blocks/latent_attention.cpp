// The multi-head latent attention block kind (deepseek_v2), as transformers' DeepseekV2Attention
// computes it. transformers caches the normalised latent and the rotated shared key part and
// expands them through kv_b_proj at every step; each position's expansion depends on that
// position alone, so the cache here holds the expanded per-head keys and values instead. Over
// this rank's heads only: its output is this rank's partial sum of the output projection.
#include <cmath>

#include "blocks/attention_indexer.h"
#include "blocks/block_kind.h"
#include "blocks/cached_attention.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// inputs {q, kv_a, kv (expanded), rope table}, outputs {q}: rotates each head's rope part of q
// and the shared rope key part of kv_a, and writes per-head keys [k_nope; k_rope] and values into
// the cache. transformers rotates the rope parts in interleaved pairs (x[2i], x[2i+1]) (deepseek_v3
// writes each rotated pair's halves apart, a permutation shared by q and k that leaves their
// dot products as they are), or in halves where the config's rope_interleave is false.
class LatentCacheWriteStep : public Step {
 public:
  LatentCacheWriteStep(Info info, int slot, int64_t heads, const LatentAttentionSpec& mla, int64_t qk_dim,
                       bool pairs)
      : Step(std::move(info)), slot_(slot), heads_(heads), mla_(mla), qk_dim_(qk_dim), pairs_(pairs) {}
  std::string_view kind() const override { return "latent_cache_write"; }

  void run(StepContext& c) const override {
    KvState& cache = c.state().get<KvState>(slot_);
    float* q = c.value(inputs()[0]);
    float* kv_a = c.value(inputs()[1]);
    const float* kv = c.value(inputs()[2]);
    const float* table = c.value(inputs()[3]);
    const int64_t rope = mla_.rope_dim, q_width = heads_ * qk_dim_;
    const int64_t kv_a_width = mla_.kv_lora_rank + rope, expanded = mla_.nope_dim + mla_.value_dim;
    const int64_t rotary_dim = c.width(inputs()[3]);
    for (int64_t t = 0; t < c.count(); ++t) {
      const float* cos = table + t * rotary_dim;
      const float* sin = cos + rotary_dim / 2;
      const auto rotate = pairs_ ? c.kernels().rotary_pairs : c.kernels().rotary_halves;
      rotate(q + t * q_width + mla_.nope_dim, heads_, qk_dim_, rope, cos, sin);
      float* k_rope = kv_a + t * kv_a_width + mla_.kv_lora_rank;
      rotate(k_rope, 1, rope, rope, cos, sin);
      const int64_t position = c.start() + t;
      for (int64_t h = 0; h < heads_; ++h) {
        const float* head = kv + (t * heads_ + h) * expanded;
        cache.write_key(h, position, head, mla_.nope_dim);
        cache.write_key(h, position, k_rope, rope, mla_.nope_dim);
        cache.write_value(h, position, head + mla_.nope_dim);
      }
    }
  }

 private:
  int slot_;
  int64_t heads_;
  const LatentAttentionSpec& mla_;
  int64_t qk_dim_;
  bool pairs_;
};

class LatentAttention : public Block {
 public:
  explicit LatentAttention(const BlockPlace& place) : place_(place) {}

  void visit(TensorVisitor& v) override {
    const DecoderSpec& spec = place_.spec;
    const WeightNames& n = spec.names;
    const LatentAttentionSpec& mla = spec.mla;
    const std::string& p = place_.tensors;
    const int64_t hidden = spec.hidden_size, heads = spec.num_heads;
    const IndexRange mine = place_.layout.query_heads;
    if (mla.q_lora_rank > 0) {
      q_a_ = v.matrix(p + n.q_a, mla.q_lora_rank, hidden);
      q_a_bias_ = bias_if(v, mla.down_bias, p + n.q_a, mla.q_lora_rank);
      q_a_norm_ = visit_norm(v, mla.latent_norm, p + n.q_a_norm, mla.q_lora_rank);
      q_b_ = v.matrix_part(p + n.q_b, heads * spec.head_dim, mla.q_lora_rank,
                           rows_of(head_range(mine, spec.head_dim), mla.q_lora_rank));
    } else {
      q_ = v.matrix_part(p + n.q, heads * spec.head_dim, hidden, rows_of(head_range(mine, spec.head_dim), hidden));
    }
    kv_a_ = v.matrix(p + n.kv_a, mla.kv_lora_rank + mla.rope_dim, hidden);
    kv_a_bias_ = bias_if(v, mla.down_bias, p + n.kv_a, mla.kv_lora_rank + mla.rope_dim);
    kv_a_norm_ = visit_norm(v, mla.latent_norm, p + n.kv_a_norm, mla.kv_lora_rank);
    const int64_t expanded = mla.nope_dim + mla.value_dim;
    kv_b_ = v.matrix_part(p + n.kv_b, heads * expanded, mla.kv_lora_rank,
                          rows_of(head_range(mine, expanded), mla.kv_lora_rank));
    o_ = v.matrix_part(p + n.o, hidden, heads * mla.value_dim, cols_of(hidden, head_range(mine, mla.value_dim)));
    o_bias_ = bias_if(v, spec.o_bias && place_.shard.rank == 0, p + n.o, hidden);
    if (has_own_indexer()) {  // every rank keeps the whole indexer and makes the same choice
      const std::string ip = p + n.indexer + ".";
      index_q_ = v.matrix(ip + "wq_b", mla.index_heads * mla.index_head_dim, mla.q_lora_rank);
      index_k_ = v.matrix(ip + "wk", mla.index_head_dim, hidden);
      index_k_norm_ = visit_norm(v, kIndexerKeyNorm, ip + "k_norm", mla.index_head_dim);
      index_weights_ = v.plain_matrix(ip + "weights_proj.weight", mla.index_heads, hidden);
    }
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const LatentAttentionSpec& mla = spec.mla;
    const WeightNames& n = spec.names;
    const std::string& s = place_.steps;
    const std::string& module = place_.tensors;
    const int64_t heads = place_.layout.query_heads.count, hidden = spec.hidden_size;
    if (heads == 0) {  // more ranks than heads: this one adds nothing
      program.add<ZeroStep>(Step::Info{s + "attention_zero", {}, {io.out}});
      return;
    }
    const int64_t qk_dim = spec.head_dim, q_width = heads * qk_dim;
    const int64_t rank = mla.kv_lora_rank, expanded = mla.nope_dim + mla.value_dim;
    const ValueId q = program.value(s + "q", q_width);
    int keep_slot = -1;
    if (mla.q_lora_rank > 0) {
      const ValueId q_latent = program.value(s + "q_latent", mla.q_lora_rank);
      add_linear(program, s + "q_a_proj", io.in, q_latent, q_a_, q_a_bias_, hidden, {module + n.q_a});
      program.add<NormStep>(Step::Info{s + "q_a_norm", {q_latent}, {q_latent}, {module + n.q_a_norm}}, q_a_norm_,
                            mla.latent_norm, mla.q_lora_rank);
      if (has_own_indexer()) keep_slot = emit_indexer(program, io, q_latent);
      add_linear(program, s + "q_b_proj", q_latent, q, q_b_, no_bias_, mla.q_lora_rank, {module + n.q_b});
    } else {
      add_linear(program, s + "q_proj", io.in, q, q_, no_bias_, hidden, {module + n.q});
    }
    // kv_a_proj_with_mqa: [latent (rank); shared rotary key (rope_dim)] per position.
    const ValueId kv_a = program.value(s + "kv_a", rank + mla.rope_dim);
    add_linear(program, s + "kv_a_proj", io.in, kv_a, kv_a_, kv_a_bias_, hidden, {module + n.kv_a});
    const ValueId latent = program.value(s + "latent", rank);
    program.add<CopyColumnsStep>(Step::Info{s + "latent", {kv_a}, {latent}}, 0);
    program.add<NormStep>(Step::Info{s + "kv_a_norm", {latent}, {latent}, {module + n.kv_a_norm}}, kv_a_norm_,
                          mla.latent_norm, rank);
    const ValueId kv = program.value(s + "kv", heads * expanded);
    add_linear(program, s + "kv_b_proj", latent, kv, kv_b_, no_bias_, rank, {module + n.kv_b});
    if (mla.index_topk > 0 && !has_own_indexer()) keep_slot = shared_indexer(program);
    const int slot = declare_kv_cache(program, s + "kv_cache", heads, qk_dim, mla.value_dim);
    program.add<LatentCacheWriteStep>(Step::Info{s + "latent_cache_write", {q, kv_a, kv, io.rope}, {q, kv_a}}, slot,
                                      heads, mla, qk_dim, spec.rope_interleaved);
    AttentionShape shape;
    shape.heads = shape.kv_heads = heads;
    shape.key_dim = qk_dim;
    shape.value_dim = mla.value_dim;
    shape.scale = spec.attention_scale > 0 ? spec.attention_scale : 1.0f / std::sqrt(static_cast<float>(qk_dim));
    const ValueId context = program.value(s + "context", heads * mla.value_dim);
    program.add<AttentionStep>(Step::Info{s + "attention", {q}, {context}, {module + n.o, true}}, slot, shape,
                               no_bias_, keep_slot);
    add_linear(program, s + "o_proj", context, io.out, o_, o_bias_, heads * mla.value_dim, {module + n.o});
  }

 private:
  bool has_own_indexer() const {
    const LatentAttentionSpec& mla = place_.spec.mla;
    return mla.index_topk > 0 && (mla.shared_index.empty() || !mla.shared_index[static_cast<size_t>(place_.layer)]);
  }

  // The choice state of the last layer before this one that has its own indexer.
  int shared_indexer(const ProgramBuilder& program) const {
    for (int64_t layer = place_.layer - 1; layer >= 0; --layer)
      if (!place_.spec.mla.shared_index[static_cast<size_t>(layer)])
        return program.find_state(layer_steps(layer) + "indexer_cache");
    return -1;  // the reader refuses a first layer that shares
  }

  // The indexer's queries (from the normalised q latent), keys and per-head weights (from the
  // block's input), and the step that chooses; returns the slot of the state holding the choice.
  int emit_indexer(ProgramBuilder& program, const BlockIo& io, ValueId q_latent) {
    const LatentAttentionSpec& mla = place_.spec.mla;
    const std::string s = place_.steps + "indexer.", module = place_.tensors + place_.spec.names.indexer + ".";
    const int64_t heads = mla.index_heads, dim = mla.index_head_dim, hidden = place_.spec.hidden_size;
    const ValueId q = program.value(s + "q", heads * dim), k = program.value(s + "k", dim);
    const ValueId weights = program.value(s + "weights", heads);
    add_linear(program, s + "wq_b", q_latent, q, index_q_, no_bias_, mla.q_lora_rank, {module + "wq_b"});
    add_linear(program, s + "wk", io.in, k, index_k_, no_bias_, hidden, {module + "wk"});
    program.add<NormStep>(Step::Info{s + "k_norm", {k}, {k}, {module + "k_norm"}}, index_k_norm_, kIndexerKeyNorm, dim);
    add_linear(program, s + "weights_proj", io.in, weights, index_weights_, no_bias_, hidden, {module + "weights_proj"});
    const int slot = declare_indexer(program, place_.steps + "indexer_cache", dim);
    program.add<IndexerStep>(Step::Info{s + "choose", {q, k, weights, io.rope}, {}}, slot, heads, dim, mla.rope_dim,
                             mla.index_rope_pairs, mla.index_topk);
    return slot;
  }

  // transformers' nn.LayerNorm(index_head_dim, eps=1e-6), with its bias.
  static constexpr NormSpec kIndexerKeyNorm{NormKind::kLayerNorm, true, false, 1e-6f};

  BlockPlace place_;
  WeightMatrix q_a_, q_b_, q_, kv_a_, kv_b_, o_, index_q_, index_k_, index_weights_;
  FloatBuffer q_a_bias_, kv_a_bias_, o_bias_, no_bias_;
  NormWeights q_a_norm_, kv_a_norm_, index_k_norm_;
};

const BlockKindRegistration registration("latent_attention", [](const BlockPlace& place) {
  return std::make_unique<LatentAttention>(place);
});

}  // namespace
}  // namespace canrun
