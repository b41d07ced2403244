// Nemotron-H (NVIDIA Nemotron 3 Nano and the Nemotron-H base models): a hybrid stack whose every
// layer holds one block after its RMSNorm: a Mamba-2 mixer, GQA attention without positions, a
// relu2 MLP without gate, or routed relu2 experts chosen by sigmoid scores plus
// e_score_correction_bias (noaux_tc) with an always-on shared expert. The layers come from
// layers_block_type or, in published configs, hybrid_override_pattern (M, *, -, E per layer).
#include <string>
#include <vector>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

// transformers' layer type, its pattern letter, and canrun's (mixer, feed-forward) kinds.
struct LayerType {
  const char* name;
  char letter;
  const char* mixer;
  const char* ffn;
};
constexpr LayerType kLayerTypes[] = {{"linear_attention", 'M', "mamba2", "none"},
                                     {"full_attention", '*', "attention", "none"},
                                     {"mlp", '-', "none", "dense_mlp"},
                                     {"moe", 'E', "none", "routed_experts"}};

const LayerType* layer_type(const std::string& name) {
  // transformers remaps the legacy names of layers_block_type.
  const std::string remapped = name == "mamba" ? "linear_attention" : name == "attention" ? "full_attention" : name;
  for (const LayerType& type : kLayerTypes)
    if (remapped == type.name) return &type;
  return nullptr;
}

// layers_block_type (or its alias layer_types), else hybrid_override_pattern, else
// transformers' default of four layers.
std::vector<const LayerType*> read_layers(const ConfigReader& config) {
  std::vector<const LayerType*> layers;
  const char* list_key = config.has("layers_block_type") ? "layers_block_type"
                         : config.has("layer_types")     ? "layer_types"
                                                         : nullptr;
  if (list_key != nullptr) {
    const Json& list = config.json()[list_key];
    if (!list.is_array() || list.empty()) config.reject(list_key, "must be a non-empty list of layer types");
    std::vector<std::string> allowed = {"linear_attention", "full_attention", "mlp", "moe", "mamba", "attention"};
    for (const std::string& name : read_layer_list(config, list_key, static_cast<int64_t>(list.size()), allowed))
      layers.push_back(layer_type(name));
    return layers;
  }
  if (!config.has("hybrid_override_pattern")) return {&kLayerTypes[0], &kLayerTypes[3], &kLayerTypes[1], &kLayerTypes[2]};
  const std::string pattern = config.string("hybrid_override_pattern", std::nullopt);
  if (pattern.empty()) config.reject("hybrid_override_pattern", "must name at least one layer");
  for (size_t i = 0; i < pattern.size(); ++i) {
    const LayerType* found = nullptr;
    for (const LayerType& type : kLayerTypes)
      if (pattern[i] == type.letter) found = &type;
    if (found == nullptr)
      config.reject("hybrid_override_pattern", "letter '" + pattern.substr(i, 1) + "' at layer " + std::to_string(i) +
                                                   " is not a layer kind (M: Mamba-2, *: attention, -: MLP, "
                                                   "E: routed experts)");
    layers.push_back(found);
  }
  return layers;
}

// A field that transformers renamed: the old spelling (mamba_n_groups...) wins when present.
std::string renamed(const ConfigReader& config, const std::string& old_name, const std::string& name) {
  return config.has(old_name) ? old_name : name;
}

void read_mamba(const ConfigReader& config, DecoderSpec& spec) {
  MambaSpec& m = spec.mamba;
  m.heads = config.integer("mamba_num_heads", 128, 1, 1 << 16);
  m.head_dim = config.integer("mamba_head_dim", 64, 1, 1 << 16);
  m.state_size = config.integer("ssm_state_size", 128, 1, 1 << 16);
  const std::string groups = renamed(config, "mamba_n_groups", "n_groups");
  m.groups = config.integer(groups, 8, 1, m.heads);
  if (m.heads % m.groups != 0)
    config.reject(groups, "must divide mamba_num_heads (" + std::to_string(m.heads) + ")");
  m.conv_kernel = config.integer(renamed(config, "mamba_d_conv", "conv_kernel"), 4, 1, 1024);
  m.conv_bias = config.boolean(renamed(config, "mamba_conv_bias", "use_conv_bias"), true);
  m.proj_bias = config.boolean("use_bias", false);
  const std::string dt_min = renamed(config, "mamba_dt_min", "time_step_min");
  m.dt_min = static_cast<float>(config.number(dt_min, 0.001));
  if (m.dt_min < 0) config.reject(dt_min, "must not be negative");
  m.norm_eps = spec.norm_eps;
  if (config.string("mamba_hidden_act", std::string("silu")) != "silu")
    reject_option(config, "mamba_hidden_act", config.string("mamba_hidden_act", std::nullopt), spec.model_type,
                  "the Mamba-2 layers run silu only");
}

// DeepSeek-V3's router with experts and a shared expert that have no gate; the shared
// expert's width is its own.
void read_experts(const ConfigReader& config, DecoderSpec& spec) {
  read_noaux_tc_experts(config, spec, {8, 2, 7688, 1, 1, 1.0});
  spec.moe.gated_experts = false;
  spec.moe.shared_ffn = config.integer("moe_shared_expert_intermediate_size", 7688, 1, int64_t{1} << 20);
  if (config.has("moe_latent_size"))
    reject_option(config, "moe_latent_size", std::to_string(config.integer("moe_latent_size", 0, 0, 1 << 20)),
                  spec.model_type, "experts on a latent projection of the hidden state are not supported yet");
}

DecoderSpec read_nemotron_h(const ConfigReader& config) {
  const std::vector<const LayerType*> layers = read_layers(config);
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 131072;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 21504;
  defaults.num_heads = 32;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 128;
  defaults.max_positions = 4096;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "layer_norm_epsilon";
  defaults.activation = "relu2";
  defaults.activation_key = "mlp_hidden_act";
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  // The layer list decides the depth; transformers ignores num_hidden_layers beside it.
  spec.num_layers = static_cast<int64_t>(layers.size());
  spec.sliding_window.assign(layers.size(), 0);
  spec.rotary = false;  // NemotronHAttention has no positions of its own: the Mamba layers order the tokens
  spec.gated_mlp = false;
  spec.mlp_bias = config.boolean("mlp_bias", false);
  for (const LayerType* layer : layers) {
    spec.mixer_kinds.push_back(layer->mixer);
    spec.ffn_kinds.push_back(layer->ffn);
  }
  read_mamba(config, spec);
  read_experts(config, spec);
  WeightNames& n = spec.names;
  n.embed = "backbone.embeddings";
  n.layers = "backbone.layers";
  n.final_norm = "backbone.norm_f";
  n.attn_norm = n.mlp_norm = "norm";
  n.q = "mixer.q_proj";
  n.k = "mixer.k_proj";
  n.v = "mixer.v_proj";
  n.o = "mixer.o_proj";
  n.up = "mixer.up_proj";
  n.down = "mixer.down_proj";
  n.router = "mixer.gate";
  n.score_bias = "mixer.gate.e_score_correction_bias";
  n.experts = "mixer.experts";
  n.shared_expert = "mixer.shared_experts";
  return spec;
}

const ArchitectureRegistration kNemotronH(
    {"nemotron_h",
     "Nemotron-H: one block per layer, Mamba-2 (M), attention without positions (*), relu2 MLP (-) or "
     "sigmoid-routed relu2 experts with a shared expert (E)",
     read_nemotron_h,
     {"layers_block_type (or hybrid_override_pattern M|*|-|E)", "mamba_num_heads, mamba_head_dim, ssm_state_size",
      "n_groups, conv_kernel, use_conv_bias, time_step_min, use_bias", "mlp_hidden_act relu2",
      "n_routed_experts, num_experts_per_tok, moe_intermediate_size, moe_shared_expert_intermediate_size",
      "routed_scaling_factor, n_group, topk_group, norm_topk_prob"},
     {"NemotronHForCausalLM"}});

}  // namespace
}  // namespace canrun
