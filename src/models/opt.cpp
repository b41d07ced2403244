// OPT: learned positions read at position + 2, LayerNorm before each block (or, opt-350m, after
// each residual add), relu MLP fc1/fc2 with biases, tied embeddings, optionally narrower than
// the model (word_embed_proj_dim, with project_in and project_out).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_opt(const ConfigReader& config) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  read_quantization(config, spec);
  spec.vocab_size = config.integer("vocab_size", 50272, 1, int64_t{1} << 22);
  spec.hidden_size = config.integer("hidden_size", 768, 1, int64_t{1} << 17);
  spec.num_layers = config.integer("num_hidden_layers", 12, 1, 1024);
  spec.num_heads = config.integer("num_attention_heads", 12, 1, 4096);
  spec.num_kv_heads = spec.num_heads;
  if (spec.hidden_size % spec.num_heads != 0) config.reject("hidden_size", "must be divisible by num_attention_heads");
  spec.head_dim = spec.hidden_size / spec.num_heads;
  spec.intermediate_size = config.integer("ffn_dim", 3072, 1, int64_t{1} << 20);
  spec.max_positions = config.integer("max_position_embeddings", 2048, 1, int64_t{1} << 24);
  const bool pre_norm = config.boolean("do_layer_norm_before", true);
  if (!config.boolean("layer_norm_elementwise_affine", true))
    reject_option(config, "layer_norm_elementwise_affine", "false", "opt", "supported: true");
  const int64_t embed_dim = config.integer("word_embed_proj_dim", spec.hidden_size, 1, int64_t{1} << 17);
  if (embed_dim != spec.hidden_size) spec.embed_dim = embed_dim;
  spec.norm_eps = 1e-5f;
  spec.norm = layer_norm(spec.norm_eps);
  spec.activation = read_activation(config, "activation_function", "relu", spec.model_type);
  spec.gated_mlp = false;
  spec.tie_embeddings = config.boolean("tie_word_embeddings", true);
  spec.rotary = false;
  spec.position_offset = 2;
  const bool bias = config.boolean("enable_bias", true);
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = bias;
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  WeightNames& n = spec.names;
  n.embed = "model.decoder.embed_tokens";
  n.positions = "model.decoder.embed_positions";
  // opt-350m normalises after each residual add and has no final norm; so does a pre-norm model
  // with _remove_final_layer_norm.
  if (!pre_norm) spec.residual = Residual::kPostNorm;
  n.final_norm = pre_norm && !config.boolean("_remove_final_layer_norm", false) ? "model.decoder.final_layer_norm" : "";
  n.project_in = "model.decoder.project_in";
  n.project_out = "model.decoder.project_out";
  n.layers = "model.decoder.layers";
  n.attn_norm = "self_attn_layer_norm";
  n.mlp_norm = "final_layer_norm";
  n.o = "self_attn.out_proj";
  n.up = "fc1";
  n.down = "fc2";
  return spec;
}

const ArchitectureRegistration kOpt({"opt", "OPT: learned positions (offset 2), LayerNorm, relu MLP", read_opt,
                                     {"enable_bias", "activation_function", "ffn_dim", "tie_word_embeddings",
                                      "do_layer_norm_before", "_remove_final_layer_norm", "word_embed_proj_dim"},
                                     {"OPTForCausalLM"}});

}  // namespace
}  // namespace canrun
