#include "runtime/decoder_weights.h"

#include <cstdint>
#include <string>

namespace canrun {
namespace {

FloatBuffer read(const WeightStore& store, const std::string& name, const std::vector<int64_t>& shape) {
  const TensorRecord& record = store.get(name, shape);
  const bool aligned = reinterpret_cast<uintptr_t>(record.data.data()) % alignof(float) == 0;
  if (record.dtype == DType::kF32 && aligned)
    return FloatBuffer::borrowing(reinterpret_cast<const float*>(record.data.data()),
                                  static_cast<size_t>(record.numel()));
  return FloatBuffer::owning(store.load_f32(name, shape));
}

FloatBuffer read_if(bool wanted, const WeightStore& store, const std::string& name,
                    const std::vector<int64_t>& shape) {
  return wanted ? read(store, name, shape) : FloatBuffer();
}

}  // namespace

DecoderWeights DecoderWeights::load(const DecoderSpec& spec, const WeightStore& store) {
  const int64_t hidden = spec.hidden_size;
  const int64_t q_width = spec.num_heads * spec.head_dim;
  const int64_t kv_width = spec.num_kv_heads * spec.head_dim;
  const int64_t ffn = spec.intermediate_size;

  DecoderWeights weights;
  weights.embed_tokens = read(store, "model.embed_tokens.weight", {spec.vocab_size, hidden});
  weights.final_norm = read(store, "model.norm.weight", {hidden});
  if (!spec.tie_embeddings) weights.lm_head = read(store, "lm_head.weight", {spec.vocab_size, hidden});

  for (int64_t i = 0; i < spec.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights layer;
    layer.attn_norm = read(store, p + "input_layernorm.weight", {hidden});
    layer.q_proj = read(store, p + "self_attn.q_proj.weight", {q_width, hidden});
    layer.k_proj = read(store, p + "self_attn.k_proj.weight", {kv_width, hidden});
    layer.v_proj = read(store, p + "self_attn.v_proj.weight", {kv_width, hidden});
    layer.o_proj = read(store, p + "self_attn.o_proj.weight", {hidden, q_width});
    layer.q_bias = read_if(spec.qkv_bias, store, p + "self_attn.q_proj.bias", {q_width});
    layer.k_bias = read_if(spec.qkv_bias, store, p + "self_attn.k_proj.bias", {kv_width});
    layer.v_bias = read_if(spec.qkv_bias, store, p + "self_attn.v_proj.bias", {kv_width});
    layer.o_bias = read_if(spec.o_bias, store, p + "self_attn.o_proj.bias", {hidden});
    layer.q_norm = read_if(spec.qk_norm, store, p + "self_attn.q_norm.weight", {spec.head_dim});
    layer.k_norm = read_if(spec.qk_norm, store, p + "self_attn.k_norm.weight", {spec.head_dim});
    layer.mlp_norm = read(store, p + "post_attention_layernorm.weight", {hidden});
    layer.gate_proj = read(store, p + "mlp.gate_proj.weight", {ffn, hidden});
    layer.up_proj = read(store, p + "mlp.up_proj.weight", {ffn, hidden});
    layer.down_proj = read(store, p + "mlp.down_proj.weight", {hidden, ffn});
    layer.gate_bias = read_if(spec.mlp_bias, store, p + "mlp.gate_proj.bias", {ffn});
    layer.up_bias = read_if(spec.mlp_bias, store, p + "mlp.up_proj.bias", {ffn});
    layer.down_bias = read_if(spec.mlp_bias, store, p + "mlp.down_proj.bias", {hidden});
    weights.layers.push_back(std::move(layer));
  }
  return weights;
}

}  // namespace canrun
