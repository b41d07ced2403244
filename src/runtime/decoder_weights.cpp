#include "runtime/decoder_weights.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "tensor/mxfp4.h"

namespace canrun {
namespace {

// Visits every tensor of a spec in one order, for loading and for listing alike.
struct TensorVisitor {
  virtual ~TensorVisitor() = default;
  // A [out, in] projection (stored [in, out] for Conv1D); returns it as [out, in].
  virtual WeightMatrix matrix(const std::string& name, int64_t out, int64_t in) = 0;
  // A [out, in] matrix under its full name, stored as such in every family (lm_head, routers).
  virtual WeightMatrix plain_matrix(const std::string& name, int64_t out, int64_t in) = 0;
  // The output projection tied to the embeddings `name`, already loaded as `embeddings`.
  virtual WeightMatrix tied_head(const std::string& name, const FloatBuffer& embeddings, int64_t out,
                                 int64_t in) = 0;
  virtual FloatBuffer vector(const std::string& name, int64_t size, TensorRole role) = 0;
  // A plain tensor of this shape (embeddings, positions, gpt-oss's 3-D experts).
  virtual FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) = 0;
  // MXFP4 "<name>_blocks" [prefix, rows, cols/32, 16] and "<name>_scales" [prefix, rows, cols/32]
  // dequantised to [prefix, rows, cols].
  virtual FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols) = 0;
};

std::vector<float> copy_of(const FloatBuffer& buffer) {
  return std::vector<float>(buffer.data(), buffer.data() + buffer.size());
}

class Loader : public TensorVisitor {
 public:
  Loader(const WeightStore& store, bool conv1d, Backend backend)
      : store_(store), conv1d_(conv1d), keep_bf16_(backend == Backend::kCpu) {}

  WeightMatrix matrix(const std::string& name, int64_t out, int64_t in) override {
    if (!conv1d_) return plain_matrix(name + ".weight", out, in);
    return plain_matrix(name + ".weight", in, out).transposed();
  }
  WeightMatrix plain_matrix(const std::string& name, int64_t out, int64_t in) override {
    const TensorRecord& record = store_.get(name, {out, in});
    if (!keep_bf16_ || record.dtype != DType::kBF16) return WeightMatrix::f32(read(name, {out, in}), out, in);
    if (reinterpret_cast<uintptr_t>(record.data.data()) % alignof(uint16_t) == 0)
      return WeightMatrix::bf16_borrowing(reinterpret_cast<const uint16_t*>(record.data.data()), out, in);
    std::vector<uint16_t> copy(static_cast<size_t>(out * in));
    std::memcpy(copy.data(), record.data.data(), copy.size() * sizeof(uint16_t));
    return WeightMatrix::bf16_owning(std::move(copy), out, in);
  }
  WeightMatrix tied_head(const std::string& name, const FloatBuffer& embeddings, int64_t out,
                         int64_t in) override {
    // bf16 embeddings on cpu: the checkpoint's bf16 (half the bytes per decode step);
    // otherwise the f32 embeddings themselves, viewed in place.
    if (keep_bf16_ && store_.get(name, {out, in}).dtype == DType::kBF16) return plain_matrix(name, out, in);
    return WeightMatrix::f32(FloatBuffer::borrowing(embeddings.data(), embeddings.size()), out, in);
  }
  FloatBuffer vector(const std::string& name, int64_t size, TensorRole) override { return read(name, {size}); }
  FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) override { return read(name, shape); }
  FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols) override {
    if (cols % 32 != 0)
      fail(ErrorKind::kCheckpoint, "tensor '" + name + "': MXFP4 needs a multiple of 32 inputs, got " +
                                       std::to_string(cols));
    const TensorRecord& blocks = store_.get_raw(name + "_blocks", {prefix, rows, cols / 32, 16}, "U8");
    const TensorRecord& scales = store_.get_raw(name + "_scales", {prefix, rows, cols / 32}, "U8");
    return FloatBuffer::owning(dequantize_mxfp4(blocks.data.data(), scales.data.data(), prefix * rows, cols));
  }

 private:
  FloatBuffer read(const std::string& name, const std::vector<int64_t>& shape) {
    const TensorRecord& record = store_.get(name, shape);
    const bool aligned = reinterpret_cast<uintptr_t>(record.data.data()) % alignof(float) == 0;
    if (record.dtype == DType::kF32 && aligned)
      return FloatBuffer::borrowing(reinterpret_cast<const float*>(record.data.data()),
                                    static_cast<size_t>(record.numel()));
    return FloatBuffer::owning(store_.load_f32(name, shape));
  }
  const WeightStore& store_;
  bool conv1d_;
  bool keep_bf16_;
};

class Lister : public TensorVisitor {
 public:
  Lister(bool conv1d) : conv1d_(conv1d) {}
  WeightMatrix matrix(const std::string& name, int64_t out, int64_t in) override {
    tensors.push_back({name + ".weight", conv1d_ ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in},
                       TensorRole::kMatrix});
    return {};
  }
  WeightMatrix plain_matrix(const std::string& name, int64_t out, int64_t in) override {
    tensors.push_back({name, {out, in}, TensorRole::kMatrix});
    return {};
  }
  WeightMatrix tied_head(const std::string&, const FloatBuffer&, int64_t, int64_t) override { return {}; }
  FloatBuffer vector(const std::string& name, int64_t size, TensorRole role) override {
    tensors.push_back({name, {size}, role});
    return {};
  }
  FloatBuffer tensor(const std::string& name, std::vector<int64_t> shape) override {
    tensors.push_back({name, std::move(shape), TensorRole::kMatrix});
    return {};
  }
  FloatBuffer mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols) override {
    tensors.push_back({name + "_blocks", {prefix, rows, cols / 32, 16}, TensorRole::kPacked});
    tensors.push_back({name + "_scales", {prefix, rows, cols / 32}, TensorRole::kPacked});
    return {};
  }
  std::vector<TensorInfo> tensors;

 private:
  bool conv1d_;
};

NormWeights norm(TensorVisitor& v, const DecoderSpec& spec, const NormSpec& kind, const std::string& name,
                 int64_t size) {
  NormWeights weights;
  if (name.empty()) return weights;
  weights.weight = v.vector(name + ".weight", size, TensorRole::kNorm);
  if (kind.bias) weights.bias = v.vector(name + ".bias", size, TensorRole::kBias);
  if (kind.unit_offset && !weights.weight.empty()) {
    // Gemma's RMSNorm multiplies by (1 + w), computed in f32; fold the 1 in once.
    std::vector<float> folded = copy_of(weights.weight);
    for (float& w : folded) w = 1.0f + w;
    weights.weight = FloatBuffer::owning(std::move(folded));
  }
  return weights;
}

FloatBuffer bias_if(TensorVisitor& v, bool wanted, const std::string& name, int64_t size) {
  return wanted ? v.vector(name + ".bias", size, TensorRole::kBias) : FloatBuffer();
}

void latent_attention(TensorVisitor& v, const DecoderSpec& spec, const std::string& p, LayerWeights& layer) {
  const WeightNames& n = spec.names;
  const LatentAttentionSpec& mla = spec.mla;
  const int64_t hidden = spec.hidden_size, heads = spec.num_heads;
  LatentAttentionWeights& w = layer.latent;
  if (mla.q_lora_rank > 0) {
    w.q_a = v.matrix(p + n.q_a, mla.q_lora_rank, hidden);
    w.q_a_bias = bias_if(v, mla.down_bias, p + n.q_a, mla.q_lora_rank);
    w.q_a_norm = norm(v, spec, mla.latent_norm, p + n.q_a_norm, mla.q_lora_rank);
    w.q_b = v.matrix(p + n.q_b, heads * spec.head_dim, mla.q_lora_rank);
  } else {
    layer.q_proj = v.matrix(p + n.q, heads * spec.head_dim, hidden);
  }
  w.kv_a = v.matrix(p + n.kv_a, mla.kv_lora_rank + mla.rope_dim, hidden);
  w.kv_a_bias = bias_if(v, mla.down_bias, p + n.kv_a, mla.kv_lora_rank + mla.rope_dim);
  w.kv_a_norm = norm(v, spec, mla.latent_norm, p + n.kv_a_norm, mla.kv_lora_rank);
  w.kv_b = v.matrix(p + n.kv_b, heads * (mla.nope_dim + mla.value_dim), mla.kv_lora_rank);
  layer.o_proj = v.matrix(p + n.o, hidden, heads * mla.value_dim);
  layer.o_bias = bias_if(v, spec.o_bias, p + n.o, hidden);
}

void attention(TensorVisitor& v, const DecoderSpec& spec, const std::string& p, LayerWeights& layer) {
  if (spec.latent_attention) return latent_attention(v, spec, p, layer);
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size, hd = spec.head_dim;
  const int64_t q_width = spec.num_heads * hd, kv_width = spec.num_kv_heads * hd;
  if (spec.fused_qkv == FusedQkv::kNone) {
    layer.q_proj = v.matrix(p + n.q, q_width, hidden);
    layer.k_proj = v.matrix(p + n.k, kv_width, hidden);
    layer.v_proj = v.matrix(p + n.v, kv_width, hidden);
    layer.q_bias = bias_if(v, spec.qkv_bias, p + n.q, q_width);
    layer.k_bias = bias_if(v, spec.qkv_bias, p + n.k, kv_width);
    layer.v_bias = bias_if(v, spec.qkv_bias, p + n.v, kv_width);
  } else {
    const int64_t total = q_width + 2 * kv_width;
    const WeightMatrix fused = v.matrix(p + n.qkv, total, hidden);
    const FloatBuffer fused_bias = bias_if(v, spec.qkv_bias, p + n.qkv, total);
    if (!fused.empty()) {
      const std::vector<float> b = copy_of(fused_bias);
      std::vector<WeightMatrix> q, k, val;
      std::vector<float> qb, kb, vb;
      const auto take = [&](std::vector<WeightMatrix>& dst, std::vector<float>& dst_bias, int64_t first,
                            int64_t count) {
        dst.push_back(fused.slice_rows(first, count));
        if (!b.empty()) dst_bias.insert(dst_bias.end(), b.begin() + first, b.begin() + first + count);
      };
      if (spec.fused_qkv == FusedQkv::kConcat) {
        take(q, qb, 0, q_width);
        take(k, kb, q_width, kv_width);
        take(val, vb, q_width + kv_width, kv_width);
      } else {  // per head [q_h; k_h; v_h], num_kv_heads == num_heads
        for (int64_t h = 0; h < spec.num_heads; ++h) {
          take(q, qb, h * 3 * hd, hd);
          take(k, kb, h * 3 * hd + hd, hd);
          take(val, vb, h * 3 * hd + 2 * hd, hd);
        }
      }
      layer.q_proj = WeightMatrix::stack(q);
      layer.k_proj = WeightMatrix::stack(k);
      layer.v_proj = WeightMatrix::stack(val);
      if (!b.empty()) {
        layer.q_bias = FloatBuffer::owning(std::move(qb));
        layer.k_bias = FloatBuffer::owning(std::move(kb));
        layer.v_bias = FloatBuffer::owning(std::move(vb));
      }
    }
  }
  if (spec.attention_sinks) layer.sinks = v.vector(p + n.sinks, spec.num_heads, TensorRole::kBias);
  layer.o_proj = v.matrix(p + n.o, hidden, q_width);
  layer.o_bias = bias_if(v, spec.o_bias, p + n.o, hidden);
  if (spec.qk_norm_kind == QkNorm::kPerHead) {
    layer.q_norm = norm(v, spec, spec.qk_norm_spec, p + n.q_norm, hd);
    layer.k_norm = norm(v, spec, spec.qk_norm_spec, p + n.k_norm, hd);
  } else if (spec.qk_norm_kind == QkNorm::kWhole) {
    layer.q_norm = norm(v, spec, spec.qk_norm_spec, p + n.q_norm, q_width);
    layer.k_norm = norm(v, spec, spec.qk_norm_spec, p + n.k_norm, kv_width);
  }
}

ExpertWeights gated_mlp(TensorVisitor& v, const std::string& gate, const std::string& up, const std::string& down,
                        int64_t hidden, int64_t ffn) {
  ExpertWeights w;
  w.gate = v.matrix(gate, ffn, hidden);
  w.up = v.matrix(up, ffn, hidden);
  w.down = v.matrix(down, hidden, ffn);
  return w;
}

// gpt-oss experts: gate_up_proj [E, hidden, 2 ffn] (x @ W, gate and up interleaved) and down_proj
// [E, ffn, hidden] with biases; or, as published, MXFP4 "_blocks"/"_scales" holding the
// transposed [E, 2 ffn, hidden] and [E, hidden, ffn].
void fused_experts(TensorVisitor& v, const DecoderSpec& spec, const std::string& p, LayerWeights& layer) {
  const int64_t experts = spec.moe.num_experts, hidden = spec.hidden_size, ffn = spec.moe.expert_ffn;
  FloatBuffer gate_up, down;
  bool transposed = false;  // true: per expert [out, in] already
  if (spec.moe.mxfp4) {
    gate_up = v.mxfp4(p + "gate_up_proj", experts, 2 * ffn, hidden);
    down = v.mxfp4(p + "down_proj", experts, hidden, ffn);
    transposed = true;
  } else {
    gate_up = v.tensor(p + "gate_up_proj", {experts, hidden, 2 * ffn});
    down = v.tensor(p + "down_proj", {experts, ffn, hidden});
  }
  const FloatBuffer gate_up_bias = v.tensor(p + "gate_up_proj_bias", {experts, 2 * ffn});
  const FloatBuffer down_bias = v.tensor(p + "down_proj_bias", {experts, hidden});
  if (gate_up.empty()) return;  // listing only
  for (int64_t e = 0; e < experts; ++e) {
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
    layer.experts.push_back(std::move(w));
  }
}

void mlp(TensorVisitor& v, const DecoderSpec& spec, int64_t index, const std::string& p, LayerWeights& layer) {
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size;
  if (layer_is_moe(spec, index)) {
    const MoeSpec& moe = spec.moe;
    layer.router = v.plain_matrix(p + n.router + ".weight", moe.num_experts, hidden);
    if (moe.router_bias) layer.router_bias = v.vector(p + n.router + ".bias", moe.num_experts, TensorRole::kBias);
    if (moe.fused_3d_experts) {
      fused_experts(v, spec, p + n.experts + ".", layer);
      return;
    }
    for (int64_t e = 0; e < moe.num_experts; ++e) {
      const std::string ep = p + n.experts + "." + std::to_string(e) + ".";
      layer.experts.push_back(gated_mlp(v, ep + n.expert_gate, ep + n.expert_up, ep + n.expert_down, hidden,
                                        moe.expert_ffn));
    }
    if (moe.shared_ffn > 0) {
      const std::string sp = p + n.shared_expert + ".";
      layer.shared_expert = gated_mlp(v, sp + n.expert_gate, sp + n.expert_up, sp + n.expert_down, hidden,
                                      moe.shared_ffn);
      if (spec.mlp_bias) {
        // deepseek_v2's shared experts are its dense MLP class, biases included.
        layer.shared_expert.gate_bias = v.vector(sp + n.expert_gate + ".bias", moe.shared_ffn, TensorRole::kBias);
        layer.shared_expert.up_bias = v.vector(sp + n.expert_up + ".bias", moe.shared_ffn, TensorRole::kBias);
        layer.shared_expert.down_bias = v.vector(sp + n.expert_down + ".bias", hidden, TensorRole::kBias);
      }
      if (moe.shared_expert_gate)
        layer.shared_expert_gate = v.plain_matrix(p + n.shared_expert_gate + ".weight", 1, hidden);
    }
    return;
  }
  const int64_t ffn = spec.intermediate_size;
  if (spec.fused_gate_up) {
    const WeightMatrix fused = v.matrix(p + n.gate_up, 2 * ffn, hidden);
    if (!fused.empty()) {
      layer.gate_proj = fused.slice_rows(0, ffn);
      layer.up_proj = fused.slice_rows(ffn, ffn);
    }
  } else {
    if (spec.gated_mlp) layer.gate_proj = v.matrix(p + n.gate, ffn, hidden);
    layer.up_proj = v.matrix(p + n.up, ffn, hidden);
    if (spec.gated_mlp) layer.gate_bias = bias_if(v, spec.mlp_bias, p + n.gate, ffn);
    layer.up_bias = bias_if(v, spec.mlp_bias, p + n.up, ffn);
  }
  layer.down_proj = v.matrix(p + n.down, hidden, ffn);
  layer.down_bias = bias_if(v, spec.mlp_bias, p + n.down, hidden);
}

DecoderWeights visit(TensorVisitor& v, const DecoderSpec& spec) {
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size;
  DecoderWeights weights;
  weights.embed_tokens = v.tensor(n.embed + ".weight", {spec.vocab_size, hidden});
  if (!n.positions.empty())
    weights.embed_positions = v.tensor(n.positions + ".weight", {spec.max_positions + spec.position_offset, hidden});
  for (int64_t i = 0; i < spec.num_layers; ++i) {
    const std::string p = n.layers + "." + std::to_string(i) + ".";
    LayerWeights layer;
    layer.attn_norm = norm(v, spec, spec.norm, n.attn_norm.empty() ? "" : p + n.attn_norm, hidden);
    attention(v, spec, p, layer);
    layer.post_attn_norm = norm(v, spec, spec.norm, n.post_attn_norm.empty() ? "" : p + n.post_attn_norm, hidden);
    layer.mlp_norm = norm(v, spec, spec.norm, n.mlp_norm.empty() ? "" : p + n.mlp_norm, hidden);
    mlp(v, spec, i, p, layer);
    layer.post_mlp_norm = norm(v, spec, spec.norm, n.post_mlp_norm.empty() ? "" : p + n.post_mlp_norm, hidden);
    weights.layers.push_back(std::move(layer));
  }
  weights.final_norm = norm(v, spec, spec.norm, n.final_norm, hidden);
  weights.lm_head = spec.tie_embeddings
                        ? v.tied_head(n.embed + ".weight", weights.embed_tokens, spec.vocab_size, hidden)
                        : v.plain_matrix(n.lm_head + ".weight", spec.vocab_size, hidden);
  if (spec.lm_head_bias) weights.lm_head_bias = v.vector(n.lm_head + ".bias", spec.vocab_size, TensorRole::kBias);
  return weights;
}

}  // namespace

DecoderWeights DecoderWeights::load(const DecoderSpec& spec, const WeightStore& store, Backend backend) {
  Loader loader(store, spec.conv1d, backend);
  return visit(loader, spec);
}

std::vector<TensorInfo> decoder_tensors(const DecoderSpec& spec) {
  Lister lister(spec.conv1d);
  visit(lister, spec);
  return lister.tensors;
}

}  // namespace canrun
