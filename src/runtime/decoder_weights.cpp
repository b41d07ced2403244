#include "runtime/decoder_weights.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "tensor/mxfp4.h"
#include "util/mapped_file.h"

namespace canrun {
namespace {

// The part of a [out, in] matrix one rank of a sharded run holds: its output rows and input columns.
struct Block {
  IndexRange rows, cols;
};

// Visits every tensor of a spec in one order, for loading and for listing alike.
struct TensorVisitor {
  virtual ~TensorVisitor() = default;
  // Block `part` of a [out, in] projection (stored [in, out] for Conv1D), returned as [out, in].
  virtual WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, Block part) = 0;
  // A [out, in] matrix under its full name, stored as such in every family (lm_head, routers).
  virtual WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, Block part) = 0;
  WeightMatrix matrix(const std::string& name, int64_t out, int64_t in) {
    return matrix_part(name, out, in, {{0, out}, {0, in}});
  }
  WeightMatrix plain_matrix(const std::string& name, int64_t out, int64_t in) {
    return plain_part(name, out, in, {{0, out}, {0, in}});
  }
  // The token embeddings [rows, cols]: bf16 stays bf16 on cpu (a lookup widens one row).
  virtual WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) = 0;
  // The output projection tied to the embeddings `name`, already loaded as `embeddings`.
  virtual WeightMatrix tied_head(const std::string& name, const WeightMatrix& embeddings) = 0;
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

// Elements `part` of a vector (a rank's share of a bias); empty stays empty.
FloatBuffer slice(FloatBuffer buffer, IndexRange part) {
  if (buffer.empty() || (part.first == 0 && part.count == static_cast<int64_t>(buffer.size()))) return buffer;
  return FloatBuffer::owning(std::vector<float>(buffer.data() + part.first, buffer.data() + part.end()));
}

class Loader : public TensorVisitor {
 public:
  Loader(const WeightStore& store, bool conv1d, Backend backend)
      : store_(store), conv1d_(conv1d), keep_bf16_(backend == Backend::kCpu) {}

  WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, Block part) override {
    if (!conv1d_) return plain_part(name + ".weight", out, in, part);
    return plain_part(name + ".weight", in, out, {part.cols, part.rows}).transposed();
  }
  WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, Block part) override {
    const TensorRecord& record = store_.get(name, {out, in});
    const int64_t rows = part.rows.count, cols = part.cols.count;
    if (part.rows.first == 0 && rows == out && cols == in) {
      if (!keep_bf16_ || record.dtype != DType::kBF16) return WeightMatrix::f32(read(name, {out, in}), out, in);
      if (reinterpret_cast<uintptr_t>(record.data.data()) % alignof(uint16_t) == 0)
        return WeightMatrix::bf16_borrowing(reinterpret_cast<const uint16_t*>(record.data.data()), out, in);
    }
    // A rank's block: only its rows and columns are copied (and widened), so each rank holds
    // about 1/N of every split matrix; whole rows stored as computed are used in place.
    const size_t element = dtype_size(*record.dtype);
    const auto row_start = [&](int64_t r) {
      return record.data.data() + ((part.rows.first + r) * in + part.cols.first) * static_cast<int64_t>(element);
    };
    const bool in_place = cols == in && reinterpret_cast<uintptr_t>(row_start(0)) % element == 0;
    if (in_place && keep_bf16_ && record.dtype == DType::kBF16)
      return WeightMatrix::bf16_borrowing(reinterpret_cast<const uint16_t*>(row_start(0)), rows, cols);
    if (in_place && record.dtype == DType::kF32)
      return WeightMatrix::f32(
          FloatBuffer::borrowing(reinterpret_cast<const float*>(row_start(0)), static_cast<size_t>(rows * cols)),
          rows, cols);
    // Copied out, the tensor's mapped pages (all of them for a column block) are not needed.
    if (keep_bf16_ && record.dtype == DType::kBF16) {
      std::vector<uint16_t> copy(static_cast<size_t>(rows * cols));
      for (int64_t r = 0; r < rows; ++r) std::memcpy(copy.data() + r * cols, row_start(r), cols * element);
      release_pages(record.data);
      return WeightMatrix::bf16_owning(std::move(copy), rows, cols);
    }
    std::vector<float> values(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      widen_to_f32(*record.dtype, row_start(r), static_cast<size_t>(cols), values.data() + r * cols);
    release_pages(record.data);
    return WeightMatrix::f32(FloatBuffer::owning(std::move(values)), rows, cols);
  }
  WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) override {
    return plain_matrix(name, rows, cols);
  }
  WeightMatrix tied_head(const std::string&, const WeightMatrix& embeddings) override {
    return embeddings.view();  // the same table, in place
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
  WeightMatrix matrix_part(const std::string& name, int64_t out, int64_t in, Block) override {
    tensors.push_back({name + ".weight", conv1d_ ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in},
                       TensorRole::kMatrix});
    return {};
  }
  WeightMatrix plain_part(const std::string& name, int64_t out, int64_t in, Block) override {
    tensors.push_back({name, {out, in}, TensorRole::kMatrix});
    return {};
  }
  WeightMatrix embeddings(const std::string& name, int64_t rows, int64_t cols) override {
    tensors.push_back({name, {rows, cols}, TensorRole::kMatrix});
    return {};
  }
  WeightMatrix tied_head(const std::string&, const WeightMatrix&) override { return {}; }
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

// The rows (or columns) of `heads` heads of `width` each.
IndexRange head_range(IndexRange heads, int64_t width) { return {heads.first * width, heads.count * width}; }

Block rows_of(IndexRange rows, int64_t in) { return {rows, {0, in}}; }
Block cols_of(int64_t out, IndexRange cols) { return {{0, out}, cols}; }

// A row-parallel output's bias (o_proj, down): held by rank 0 alone, so the sum over ranks adds it once.
FloatBuffer output_bias(TensorVisitor& v, bool wanted, const std::string& name, int64_t size, Shard shard) {
  return bias_if(v, wanted && shard.rank == 0, name, size);
}

void latent_attention(TensorVisitor& v, const DecoderSpec& spec, const ShardLayout& layout, Shard shard,
                      const std::string& p, LayerWeights& layer) {
  const WeightNames& n = spec.names;
  const LatentAttentionSpec& mla = spec.mla;
  const int64_t hidden = spec.hidden_size, heads = spec.num_heads;
  const IndexRange mine = layout.query_heads;
  LatentAttentionWeights& w = layer.latent;
  if (mla.q_lora_rank > 0) {
    w.q_a = v.matrix(p + n.q_a, mla.q_lora_rank, hidden);
    w.q_a_bias = bias_if(v, mla.down_bias, p + n.q_a, mla.q_lora_rank);
    w.q_a_norm = norm(v, spec, mla.latent_norm, p + n.q_a_norm, mla.q_lora_rank);
    w.q_b = v.matrix_part(p + n.q_b, heads * spec.head_dim, mla.q_lora_rank,
                          rows_of(head_range(mine, spec.head_dim), mla.q_lora_rank));
  } else {
    layer.q_proj =
        v.matrix_part(p + n.q, heads * spec.head_dim, hidden, rows_of(head_range(mine, spec.head_dim), hidden));
  }
  w.kv_a = v.matrix(p + n.kv_a, mla.kv_lora_rank + mla.rope_dim, hidden);
  w.kv_a_bias = bias_if(v, mla.down_bias, p + n.kv_a, mla.kv_lora_rank + mla.rope_dim);
  w.kv_a_norm = norm(v, spec, mla.latent_norm, p + n.kv_a_norm, mla.kv_lora_rank);
  const int64_t expanded = mla.nope_dim + mla.value_dim;
  w.kv_b = v.matrix_part(p + n.kv_b, heads * expanded, mla.kv_lora_rank,
                         rows_of(head_range(mine, expanded), mla.kv_lora_rank));
  layer.o_proj =
      v.matrix_part(p + n.o, hidden, heads * mla.value_dim, cols_of(hidden, head_range(mine, mla.value_dim)));
  layer.o_bias = output_bias(v, spec.o_bias, p + n.o, hidden, shard);
}

void attention(TensorVisitor& v, const DecoderSpec& spec, const ShardLayout& layout, Shard shard,
               const std::string& p, LayerWeights& layer) {
  if (spec.latent_attention) return latent_attention(v, spec, layout, shard, p, layer);
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size, hd = spec.head_dim;
  const int64_t q_width = spec.num_heads * hd, kv_width = spec.num_kv_heads * hd;
  const IndexRange q_rows = head_range(layout.query_heads, hd), kv_rows = head_range(layout.kv_heads, hd);
  if (spec.fused_qkv == FusedQkv::kNone) {
    layer.q_proj = v.matrix_part(p + n.q, q_width, hidden, rows_of(q_rows, hidden));
    layer.k_proj = v.matrix_part(p + n.k, kv_width, hidden, rows_of(kv_rows, hidden));
    layer.v_proj = v.matrix_part(p + n.v, kv_width, hidden, rows_of(kv_rows, hidden));
    layer.q_bias = slice(bias_if(v, spec.qkv_bias, p + n.q, q_width), q_rows);
    layer.k_bias = slice(bias_if(v, spec.qkv_bias, p + n.k, kv_width), kv_rows);
    layer.v_bias = slice(bias_if(v, spec.qkv_bias, p + n.v, kv_width), kv_rows);
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
        take(q, qb, q_rows.first, q_rows.count);
        take(k, kb, q_width + kv_rows.first, kv_rows.count);
        take(val, vb, q_width + kv_width + kv_rows.first, kv_rows.count);
      } else {  // per head [q_h; k_h; v_h], num_kv_heads == num_heads
        for (int64_t h = layout.query_heads.first; h < layout.query_heads.end(); ++h) {
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
  if (spec.attention_sinks)
    layer.sinks = slice(v.vector(p + n.sinks, spec.num_heads, TensorRole::kBias), layout.query_heads);
  layer.o_proj = v.matrix_part(p + n.o, hidden, q_width, cols_of(hidden, q_rows));
  layer.o_bias = output_bias(v, spec.o_bias, p + n.o, hidden, shard);
  if (spec.qk_norm_kind == QkNorm::kPerHead) {
    layer.q_norm = norm(v, spec, spec.qk_norm_spec, p + n.q_norm, hd);
    layer.k_norm = norm(v, spec, spec.qk_norm_spec, p + n.k_norm, hd);
  } else if (spec.qk_norm_kind == QkNorm::kWhole) {
    layer.q_norm = norm(v, spec, spec.qk_norm_spec, p + n.q_norm, q_width);
    layer.k_norm = norm(v, spec, spec.qk_norm_spec, p + n.k_norm, kv_width);
  }
}

// The intermediate columns `mine` of a gated MLP: gate and up rows, down columns.
ExpertWeights gated_mlp(TensorVisitor& v, const std::string& gate, const std::string& up, const std::string& down,
                        int64_t hidden, int64_t ffn, IndexRange mine) {
  ExpertWeights w;
  w.gate = v.matrix_part(gate, ffn, hidden, rows_of(mine, hidden));
  w.up = v.matrix_part(up, ffn, hidden, rows_of(mine, hidden));
  w.down = v.matrix_part(down, hidden, ffn, cols_of(hidden, mine));
  return w;
}

// gpt-oss experts: gate_up_proj [E, hidden, 2 ffn] (x @ W, gate and up interleaved) and down_proj
// [E, ffn, hidden] with biases; or, as published, MXFP4 "_blocks"/"_scales" holding the
// transposed [E, 2 ffn, hidden] and [E, hidden, ffn].
void fused_experts(TensorVisitor& v, const DecoderSpec& spec, IndexRange mine, const std::string& p,
                   LayerWeights& layer) {
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
    layer.experts.push_back(std::move(w));
  }
}

void mlp(TensorVisitor& v, const DecoderSpec& spec, const ShardLayout& layout, Shard shard, int64_t index,
         const std::string& p, LayerWeights& layer) {
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size;
  if (layer_is_moe(spec, index)) {
    const MoeSpec& moe = spec.moe;
    layer.router = v.plain_matrix(p + n.router + ".weight", moe.num_experts, hidden);
    if (moe.router_bias) layer.router_bias = v.vector(p + n.router + ".bias", moe.num_experts, TensorRole::kBias);
    if (moe.fused_3d_experts) {
      fused_experts(v, spec, layout.experts, p + n.experts + ".", layer);
      return;
    }
    for (int64_t e = layout.experts.first; e < layout.experts.end(); ++e) {
      const std::string ep = p + n.experts + "." + std::to_string(e) + ".";
      layer.experts.push_back(gated_mlp(v, ep + n.expert_gate, ep + n.expert_up, ep + n.expert_down, hidden,
                                        moe.expert_ffn, {0, moe.expert_ffn}));
    }
    if (moe.shared_ffn > 0) {
      const std::string sp = p + n.shared_expert + ".";
      layer.shared_expert = gated_mlp(v, sp + n.expert_gate, sp + n.expert_up, sp + n.expert_down, hidden,
                                      moe.shared_ffn, layout.shared_ffn);
      if (spec.mlp_bias) {
        // deepseek_v2's shared experts are its dense MLP class, biases included.
        layer.shared_expert.gate_bias =
            slice(v.vector(sp + n.expert_gate + ".bias", moe.shared_ffn, TensorRole::kBias), layout.shared_ffn);
        layer.shared_expert.up_bias =
            slice(v.vector(sp + n.expert_up + ".bias", moe.shared_ffn, TensorRole::kBias), layout.shared_ffn);
        layer.shared_expert.down_bias = output_bias(v, true, sp + n.expert_down, hidden, shard);
      }
      if (moe.shared_expert_gate)
        layer.shared_expert_gate = v.plain_matrix(p + n.shared_expert_gate + ".weight", 1, hidden);
    }
    return;
  }
  const int64_t ffn = spec.intermediate_size;
  const IndexRange mine = layout.ffn;
  if (spec.fused_gate_up) {
    const WeightMatrix fused = v.matrix(p + n.gate_up, 2 * ffn, hidden);
    if (!fused.empty()) {
      layer.gate_proj = fused.slice_rows(mine.first, mine.count);
      layer.up_proj = fused.slice_rows(ffn + mine.first, mine.count);
    }
  } else {
    if (spec.gated_mlp) layer.gate_proj = v.matrix_part(p + n.gate, ffn, hidden, rows_of(mine, hidden));
    layer.up_proj = v.matrix_part(p + n.up, ffn, hidden, rows_of(mine, hidden));
    if (spec.gated_mlp) layer.gate_bias = slice(bias_if(v, spec.mlp_bias, p + n.gate, ffn), mine);
    layer.up_bias = slice(bias_if(v, spec.mlp_bias, p + n.up, ffn), mine);
  }
  layer.down_proj = v.matrix_part(p + n.down, hidden, ffn, cols_of(hidden, mine));
  layer.down_bias = output_bias(v, spec.mlp_bias, p + n.down, hidden, shard);
}

DecoderWeights visit(TensorVisitor& v, const DecoderSpec& spec, Shard shard) {
  const ShardLayout layout = shard_layout(spec, shard);
  const WeightNames& n = spec.names;
  const int64_t hidden = spec.hidden_size;
  DecoderWeights weights;
  weights.embed_tokens = v.embeddings(n.embed + ".weight", spec.vocab_size, hidden);
  if (!n.positions.empty())
    weights.embed_positions = v.tensor(n.positions + ".weight", {spec.max_positions + spec.position_offset, hidden});
  for (int64_t i = 0; i < spec.num_layers; ++i) {
    const std::string p = n.layers + "." + std::to_string(i) + ".";
    LayerWeights layer;
    layer.attn_norm = norm(v, spec, spec.norm, n.attn_norm.empty() ? "" : p + n.attn_norm, hidden);
    attention(v, spec, layout, shard, p, layer);
    layer.post_attn_norm = norm(v, spec, spec.norm, n.post_attn_norm.empty() ? "" : p + n.post_attn_norm, hidden);
    layer.mlp_norm = norm(v, spec, spec.norm, n.mlp_norm.empty() ? "" : p + n.mlp_norm, hidden);
    mlp(v, spec, layout, shard, i, p, layer);
    layer.post_mlp_norm = norm(v, spec, spec.norm, n.post_mlp_norm.empty() ? "" : p + n.post_mlp_norm, hidden);
    weights.layers.push_back(std::move(layer));
  }
  weights.final_norm = norm(v, spec, spec.norm, n.final_norm, hidden);
  weights.lm_head = spec.tie_embeddings
                        ? v.tied_head(n.embed + ".weight", weights.embed_tokens)
                        : v.plain_matrix(n.lm_head + ".weight", spec.vocab_size, hidden);
  if (spec.lm_head_bias) weights.lm_head_bias = v.vector(n.lm_head + ".bias", spec.vocab_size, TensorRole::kBias);
  return weights;
}

}  // namespace

DecoderWeights DecoderWeights::load(const DecoderSpec& spec, const WeightStore& store, Backend backend,
                                    Shard shard) {
  Loader loader(store, spec.conv1d, backend);
  return visit(loader, spec, shard);
}

std::vector<TensorInfo> decoder_tensors(const DecoderSpec& spec) {
  Lister lister(spec.conv1d);
  visit(lister, spec, Shard{});
  return lister.tensors;
}

}  // namespace canrun
