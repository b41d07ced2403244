// Granite 4.0-H (granitemoehybrid): Mamba-2 layers and GQA attention layers (rope, or no
// positions at all with position_embedding_type other than "rope"), each followed by routed
// experts (softmax over the top-k logits) plus a shared SwiGLU MLP, or that MLP alone without
// experts; Granite's embedding, residual, attention and logits multipliers.
#include <string>
#include <vector>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

// "mamba2" or "attention" per layer from layer_types (or layers_block_type); transformers'
// default is Mamba everywhere.
std::vector<std::string> mixer_kinds(const ConfigReader& config, int64_t num_layers) {
  std::vector<std::string> kinds(static_cast<size_t>(num_layers), "mamba2");
  const char* key = config.has("layer_types") ? "layer_types" : config.has("layers_block_type") ? "layers_block_type"
                                                                                                  : nullptr;
  if (key == nullptr) return kinds;
  const std::vector<std::string> types =
      read_layer_list(config, key, num_layers, {"linear_attention", "full_attention", "mamba", "attention"});
  for (int64_t i = 0; i < num_layers; ++i)
    if (types[static_cast<size_t>(i)] == "full_attention" || types[static_cast<size_t>(i)] == "attention")
      kinds[i] = "attention";
  return kinds;
}

DecoderSpec read_granitemoehybrid(const ConfigReader& config) {
  DecoderSpec spec = read_llama_like_spec(config, LlamaLikeDefaults{});
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", false);
  spec.embedding_scale = static_cast<float>(config.number("embedding_multiplier", 1.0));
  spec.residual_scale = static_cast<float>(config.number("residual_multiplier", 1.0));
  spec.attention_scale = static_cast<float>(config.number("attention_multiplier", 1.0));
  if (spec.attention_scale <= 0) config.reject("attention_multiplier", "must be positive");
  const double logits_scaling = config.number("logits_scaling", 1.0);
  if (logits_scaling == 0) config.reject("logits_scaling", "must not be zero");
  spec.logits_scale = static_cast<float>(1.0 / logits_scaling);
  spec.rotary = config.string("position_embedding_type", std::string("none")) == "rope";
  spec.mixer_kinds = mixer_kinds(config, spec.num_layers);
  read_mamba(config, spec, config.integer("mamba_expand", 2, 1, 64) * spec.hidden_size);
  WeightNames& n = spec.names;
  n.mamba = "mamba";
  const int64_t shared = config.integer("shared_intermediate_size", 1024, 1, int64_t{1} << 20);
  MoeKeys keys;
  keys.num_experts = "num_local_experts";
  keys.default_experts = 8;
  keys.default_top_k = 2;
  keys.expert_ffn = nullptr;  // the experts' width is intermediate_size
  keys.always_normalize = false;
  const bool experts = config.integer("num_local_experts", 8, 0, 1 << 16) > 0;
  if (!experts) {
    // The shared MLP alone: a dense SwiGLU with gate and up in one projection.
    spec.intermediate_size = shared;
    spec.fused_gate_up = true;
    n.gate_up = "shared_mlp.input_linear";
    n.down = "shared_mlp.output_linear";
    spec.ffn_kinds.assign(static_cast<size_t>(spec.num_layers), "dense_mlp");
    return spec;
  }
  spec.moe = read_moe(config, spec, keys);
  spec.moe.softmax_after_top_k = true;
  spec.moe.stacked = MoeSpec::Stacked::kRows;
  spec.moe.shared_ffn = shared;
  n.router = "block_sparse_moe.router.layer";
  n.experts = "block_sparse_moe";
  n.stacked_gate_up = "input_linear.weight";
  n.stacked_down = "output_linear.weight";
  n.expert_up = "input_linear";  // the shared expert's [gate; up]
  n.expert_down = "output_linear";
  n.shared_expert = "shared_mlp";
  spec.ffn_kinds.assign(static_cast<size_t>(spec.num_layers), "routed_experts");
  return spec;
}

const ArchitectureRegistration kGraniteMoeHybrid(
    {"granitemoehybrid",
     "Granite 4.0-H: Mamba-2 and attention layers, each with routed experts plus a shared SwiGLU MLP; Granite's "
     "multipliers",
     read_granitemoehybrid,
     {"layer_types mamba|attention (or linear_attention|full_attention)", "position_embedding_type rope|none",
      "mamba_n_heads, mamba_d_head, mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand",
      "mamba_conv_bias, mamba_proj_bias, time_step_limit", "num_local_experts (0: the shared MLP alone)",
      "num_experts_per_tok, shared_intermediate_size",
      "embedding_multiplier, residual_multiplier, attention_multiplier, logits_scaling",
      "rope default|linear|dynamic|yarn|llama3"},
     {"GraniteMoeHybridForCausalLM"}});

}  // namespace
}  // namespace canrun
