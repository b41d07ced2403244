// GPT-2: learned absolute positions, pre-LayerNorm with biases, fused c_attn stored as
// Conv1D ([in, out]), gelu_new MLP, tied embeddings.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// GPT2Config's attribute_map: the common name (hidden_size for n_embd, ...) is taken too, and
// wins where a config has both, as transformers sets it after its own field.
const char* gpt2_key(const ConfigReader& config, const char* own, const char* common) {
  return config.has(common) ? common : own;
}

DecoderSpec read_gpt2(const ConfigReader& config) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  read_quantization(config, spec);
  spec.vocab_size = config.integer("vocab_size", 50257, 1, int64_t{1} << 22);
  const char* hidden = gpt2_key(config, "n_embd", "hidden_size");
  const char* heads = gpt2_key(config, "n_head", "num_attention_heads");
  spec.hidden_size = config.integer(hidden, 768, 1, int64_t{1} << 17);
  spec.num_layers = config.integer(gpt2_key(config, "n_layer", "num_hidden_layers"), 12, 1, 1024);
  spec.num_heads = config.integer(heads, 12, 1, 4096);
  spec.num_kv_heads = spec.num_heads;
  if (spec.hidden_size % spec.num_heads != 0) config.reject(hidden, std::string("must be divisible by ") + heads);
  spec.head_dim = spec.hidden_size / spec.num_heads;
  spec.intermediate_size = config.integer("n_inner", 4 * spec.hidden_size, 1, int64_t{1} << 20);
  spec.max_positions = config.integer(gpt2_key(config, "n_positions", "max_position_embeddings"), 1024, 1,
                                      int64_t{1} << 24);
  spec.norm_eps = static_cast<float>(config.number("layer_norm_epsilon", 1e-5));
  spec.norm = layer_norm(spec.norm_eps);
  spec.activation = read_activation(config, "activation_function", "gelu_new", spec.model_type);
  spec.gated_mlp = false;
  spec.tie_embeddings = config.boolean("tie_word_embeddings", true);
  if (config.boolean("scale_attn_by_inverse_layer_idx", false))
    reject_option(config, "scale_attn_by_inverse_layer_idx", "true", "gpt2", "supported: false");
  if (!config.boolean("scale_attn_weights", true)) spec.attention_scale = 1.0f;
  spec.rotary = false;
  spec.fused_qkv = FusedQkv::kConcat;
  spec.conv1d = true;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = true;
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  WeightNames& n = spec.names;
  n.embed = "transformer.wte";
  n.positions = "transformer.wpe";
  n.final_norm = "transformer.ln_f";
  n.layers = "transformer.h";
  n.attn_norm = "ln_1";
  n.mlp_norm = "ln_2";
  n.qkv = "attn.c_attn";
  n.o = "attn.c_proj";
  n.up = "mlp.c_fc";
  n.down = "mlp.c_proj";
  return spec;
}

const ArchitectureRegistration kGpt2({"gpt2", "GPT-2: learned positions, Conv1D weights, LayerNorm, gelu_new MLP",
                                      read_gpt2,
                                      {"activation_function", "n_inner", "scale_attn_weights",
                                       "tie_word_embeddings"}, {"GPT2LMHeadModel"}});

}  // namespace
}  // namespace canrun
