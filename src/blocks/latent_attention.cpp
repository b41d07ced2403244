// The multi-head latent attention block kind (deepseek_v2), as transformers' DeepseekV2Attention
// computes it. transformers caches the normalised latent and the rotated shared key part and
// expands them through kv_b_proj at every step; each position's expansion depends on that
// position alone, so the cache here holds the expanded per-head keys and values instead. Over
// this rank's heads only: its output is this rank's partial sum of the output projection.
#include <cmath>

#include "blocks/block_kind.h"
#include "blocks/cached_attention.h"
#include "blocks/steps.h"
#include "program/step_context.h"

namespace canrun {
namespace {

// inputs {q, kv_a, kv (expanded), rope table}, outputs {q}: rotates each head's rope part of q
// and the shared rope key part of kv_a, and writes per-head keys [k_nope; k_rope] and values into
// the cache. transformers rotates the rope parts as complex numbers (x[2i] + i x[2i+1]) times
// e^(i angle): interleaved pairs, no permutation.
class LatentCacheWriteStep : public Step {
 public:
  LatentCacheWriteStep(Info info, int slot, int64_t heads, const LatentAttentionSpec& mla, int64_t qk_dim)
      : Step(std::move(info)), slot_(slot), heads_(heads), mla_(mla), qk_dim_(qk_dim) {}
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
      c.kernels().rotary_pairs(q + t * q_width + mla_.nope_dim, heads_, qk_dim_, rope, cos, sin);
      float* k_rope = kv_a + t * kv_a_width + mla_.kv_lora_rank;
      c.kernels().rotary_pairs(k_rope, 1, rope, rope, cos, sin);
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
    if (mla.q_lora_rank > 0) {
      const ValueId q_latent = program.value(s + "q_latent", mla.q_lora_rank);
      add_linear(program, s + "q_a_proj", io.in, q_latent, q_a_, q_a_bias_, hidden, {module + n.q_a});
      program.add<NormStep>(Step::Info{s + "q_a_norm", {q_latent}, {q_latent}, {module + n.q_a_norm}}, q_a_norm_,
                            mla.latent_norm, mla.q_lora_rank);
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
    const int slot = declare_kv_cache(program, s + "kv_cache", heads, qk_dim, mla.value_dim);
    program.add<LatentCacheWriteStep>(Step::Info{s + "latent_cache_write", {q, kv_a, kv, io.rope}, {q, kv_a}}, slot,
                                      heads, mla, qk_dim);
    AttentionShape shape;
    shape.heads = shape.kv_heads = heads;
    shape.key_dim = qk_dim;
    shape.value_dim = mla.value_dim;
    shape.scale = spec.attention_scale > 0 ? spec.attention_scale : 1.0f / std::sqrt(static_cast<float>(qk_dim));
    const ValueId context = program.value(s + "context", heads * mla.value_dim);
    program.add<AttentionStep>(Step::Info{s + "attention", {q}, {context}, {module + n.o, true}}, slot, shape,
                               no_bias_);
    add_linear(program, s + "o_proj", context, io.out, o_, o_bias_, heads * mla.value_dim, {module + n.o});
  }

 private:
  BlockPlace place_;
  WeightMatrix q_a_, q_b_, q_, kv_a_, kv_b_, o_;
  FloatBuffer q_a_bias_, kv_a_bias_, o_bias_, no_bias_;
  NormWeights q_a_norm_, kv_a_norm_;
};

const BlockKindRegistration registration("latent_attention", [](const BlockPlace& place) {
  return std::make_unique<LatentAttention>(place);
});

}  // namespace
}  // namespace canrun
