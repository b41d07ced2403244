// DeepSeek-V4 (deepseek_v4): hyper-connected residual streams around each block; attention with
// one key head that is also the value, a sliding window on every layer and, on the compressed
// layers, one more key per closed window of positions (heavily compressed attention), or per pair
// of overlapping windows with an indexer choosing among them (compressed sparse attention);
// routed experts scored by sqrt(softplus), chosen by a fixed token table on the first layers and
// by the biased top-k on the rest, with a limited SwiGLU, plus a shared expert.
#include <algorithm>
#include <map>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

// The compression rate of each attention layer type: compress_rates, else the legacy
// compress_rate_csa / compress_rate_hca, else DeepseekV4Config's 4 and 128.
std::map<std::string, int64_t> compress_rates(const ConfigReader& config) {
  std::map<std::string, int64_t> rates = {{"compressed_sparse_attention", 4}, {"heavily_compressed_attention", 128}};
  if (config.has("compress_rates")) {
    const ConfigReader given = config.object("compress_rates");
    for (auto& [type, rate] : rates) rate = given.integer(type, rate, 1, 1 << 20);
  }
  rates["compressed_sparse_attention"] =
      config.integer("compress_rate_csa", rates["compressed_sparse_attention"], 1, 1 << 20);
  rates["heavily_compressed_attention"] =
      config.integer("compress_rate_hca", rates["heavily_compressed_attention"], 1, 1 << 20);
  return rates;
}

// A per-layer list of `allowed` names; transformers keeps the first num_hidden_layers entries of
// a longer one.
std::vector<std::string> first_layers(const ConfigReader& config, const std::string& key, int64_t layers,
                                      const std::vector<std::string>& allowed) {
  const Json& list = config.json()[key];
  if (!list.is_array() || static_cast<int64_t>(list.size()) <= layers)
    return read_layer_list(config, key, layers, allowed);
  Json cut = config.json();
  cut[key] = Json(std::vector<Json>(list.begin(), list.begin() + layers));
  return read_layer_list(ConfigReader(cut, config.path()), key, layers, allowed);
}

// layer_types, else the legacy per-layer compress_ratios (0, 4, 128), else two heavily
// compressed layers then sparse and heavily compressed in turn.
std::vector<std::string> attention_types(const ConfigReader& config, int64_t layers) {
  const std::vector<std::string> kinds = {"sliding_attention", "compressed_sparse_attention",
                                          "heavily_compressed_attention"};
  if (config.has("layer_types")) return first_layers(config, "layer_types", layers, kinds);
  std::vector<std::string> types;
  if (config.has("compress_ratios")) {
    const Json& ratios = config.json()["compress_ratios"];
    if (!ratios.is_array() || static_cast<int64_t>(ratios.size()) < layers)
      config.reject("compress_ratios", "must give 0, 4 or 128 for each of the " + std::to_string(layers) + " layers");
    for (int64_t i = 0; i < layers; ++i) {
      const Json& ratio = ratios[static_cast<size_t>(i)];
      const int64_t r = ratio.is_number_integer() ? ratio.get<int64_t>() : -1;
      if (r != 0 && r != 4 && r != 128)
        config.reject("compress_ratios", "entry " + std::to_string(i) + " must be 0, 4 or 128");
      types.push_back(r == 0 ? kinds[0] : r == 4 ? kinds[1] : kinds[2]);
    }
    return types;
  }
  for (int64_t i = 0; i < layers; ++i) types.push_back(i < 2 || i % 2 == 0 ? kinds[2] : kinds[1]);
  return types;
}

// The two rotations: "main" (sliding layers) and "compress" (compressed layers and their keys),
// as rope_parameters gives them nested, else the main one a default rope of rope_theta and the
// compress one the top-level rope fields at compress_rope_theta, yarn's attention factor 1.
void read_ropes(const ConfigReader& config, DecoderSpec& spec, double partial) {
  RopeDefaults main_defaults;
  main_defaults.partial_rotary_factor = partial;
  main_defaults.max_positions = spec.max_positions;
  RopeDefaults compress_defaults = main_defaults;
  compress_defaults.theta_key = "compress_rope_theta";
  compress_defaults.theta = 160000.0;
  CompressedAttentionSpec& ca = spec.compressed;
  const std::string key = config.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (config.has(key) && config.object(key).has("main")) {
    const ConfigReader ropes = config.object(key);
    const ConfigReader main = ropes.object("main"), compress = ropes.object("compress");
    spec.rope = read_rope_parameters(config, &main, spec.head_dim, main_defaults);
    ca.compress_rope = read_rope_parameters(config, &compress, spec.head_dim, compress_defaults);
  } else {
    spec.rope = read_rope_parameters(config, nullptr, spec.head_dim, main_defaults);
    if (config.has(key)) {
      const ConfigReader params = config.object(key);
      ca.compress_rope = read_rope_parameters(config, &params, spec.head_dim, compress_defaults);
      ca.compress_rope.theta = config.number("compress_rope_theta", 160000.0);
      if (ca.compress_rope.type == "yarn" && !params.has("attention_factor")) ca.compress_rope.attention_factor = 1.0;
    } else {
      ca.compress_rope = read_rope_parameters(config, nullptr, spec.head_dim, compress_defaults);
    }
  }
  for (const RopeSpec* rope : {&spec.rope, &ca.compress_rope})
    if (rope->type != "default" && rope->type != "yarn" && rope->type != "linear")
      reject_option(config, key, "rope_type '" + rope->type + "'", spec.model_type, "supported: default, linear, yarn");
  ca.rope_dim = spec.rope.rotary_dim;
  if (ca.compress_rope.rotary_dim != ca.rope_dim)
    config.reject("rope_parameters", "main and compress must rotate the same number of dimensions");
}

DecoderSpec read_deepseek_v4(const ConfigReader& config) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  // The Hub's checkpoints store FP8 weights with ue8m0 scales under DeepSeek's ".scale" names and
  // FP4 experts; canrun reads unquantised ones.
  if (config.has("quantization_config"))
    reject_option(config, "quantization_config", "quant_method '" +
                      config.object("quantization_config").string("quant_method", std::string("unknown")) + "'",
                  spec.model_type, "supported: none (bf16, f16 or f32 weights)");
  spec.vocab_size = config.integer("vocab_size", 129280, 1, int64_t{1} << 22);
  spec.hidden_size = config.integer("hidden_size", 4096, 1, kMaxConfigWidth);
  spec.num_layers = config.integer("num_hidden_layers", 43, 1, 1024);
  spec.num_heads = config.integer("num_attention_heads", 64, 1, 4096);
  spec.num_kv_heads = config.integer("num_key_value_heads", 1, 1, 1);
  spec.head_dim = config.integer("head_dim", 512, 2, 8192);
  spec.max_positions = config.integer("max_position_embeddings", 1048576, 1, int64_t{1} << 30);
  spec.norm_eps = static_cast<float>(config.number("rms_norm_eps", 1e-6));
  if (spec.norm_eps <= 0) config.reject("rms_norm_eps", "must be positive");
  spec.norm = rms_norm(spec.norm_eps);
  spec.tie_embeddings = config.boolean("tie_word_embeddings", false);
  spec.activation = read_activation(config, "hidden_act", "silu", spec.model_type);
  if (config.boolean("mlp_bias", false))
    reject_option(config, "mlp_bias", "true", spec.model_type, "its experts have no biases; supported: false");
  spec.rotary = false;  // the attention block rotates with its own two ropes
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);

  // partial_rotary_factor, else the legacy qk_rope_head_dim / head_dim, else 64 / 512.
  const double partial = config.has("partial_rotary_factor")
                             ? config.number("partial_rotary_factor", std::nullopt)
                             : static_cast<double>(config.integer("qk_rope_head_dim", spec.head_dim / 8, 2,
                                                                  spec.head_dim)) /
                                   static_cast<double>(spec.head_dim);
  read_ropes(config, spec, partial);

  CompressedAttentionSpec& ca = spec.compressed;
  ca.q_lora_rank = config.integer("q_lora_rank", 1024, 1, kMaxConfigWidth);
  ca.window = config.integer("sliding_window", 128, 1, int64_t{1} << 24);
  ca.o_groups = config.integer("o_groups", 8, 1, spec.num_heads);
  if (spec.num_heads * spec.head_dim % ca.o_groups != 0)
    config.reject("o_groups", "must divide num_attention_heads * head_dim (" +
                                  std::to_string(spec.num_heads * spec.head_dim) + ")");
  ca.o_lora_rank = config.integer("o_lora_rank", 1024, 1, kMaxConfigWidth);
  ca.index_heads = config.integer("index_n_heads", 64, 1, 4096);
  ca.index_head_dim = config.integer("index_head_dim", 128, ca.rope_dim, 8192);
  ca.index_topk = config.integer("index_topk", 512, 1, int64_t{1} << 24);
  const std::map<std::string, int64_t> rates = compress_rates(config);
  for (const std::string& type : attention_types(config, spec.num_layers)) {
    ca.rates.push_back(type == "sliding_attention" ? 0 : rates.at(type));
    ca.indexed.push_back(type == "compressed_sparse_attention");
  }
  spec.mixer_kinds.assign(static_cast<size_t>(spec.num_layers), "compressed_attention");

  spec.hyper.streams = config.integer("hc_mult", 4, 1, 64);
  spec.hyper.sinkhorn_iters = config.integer("hc_sinkhorn_iters", 20, 1, 1000);
  spec.hyper.eps = static_cast<float>(config.number("hc_eps", 1e-6));

  const std::string scoring = config.string("scoring_func", std::string("sqrtsoftplus"));
  if (scoring != "sqrtsoftplus" && scoring != "sigmoid")
    reject_option(config, "scoring_func", "'" + scoring + "'", spec.model_type, "supported: sqrtsoftplus, sigmoid");
  MoeKeys keys;
  keys.num_experts = "n_routed_experts";
  keys.num_experts_alias = "num_local_experts";
  keys.default_experts = 256;
  keys.default_top_k = 6;
  keys.default_expert_ffn = 2048;
  keys.always_normalize = true;  // transformers renormalises whatever norm_topk_prob says
  spec.moe = read_moe(config, spec, keys);
  if (spec.moe.num_experts < 1) config.reject("n_routed_experts", "must be at least 1");
  spec.moe.sigmoid_scores = true;
  spec.moe.sqrt_softplus_scores = scoring == "sqrtsoftplus";
  spec.moe.routed_scale = static_cast<float>(config.number("routed_scaling_factor", 1.5));
  spec.moe.shared_ffn = spec.moe.expert_ffn;  // one shared MLP whatever n_shared_experts says, as transformers builds
  spec.moe.limited_swiglu = true;
  spec.moe.swiglu_limit = static_cast<float>(config.number("swiglu_limit", 10.0));
  if (spec.moe.swiglu_limit <= 0) config.reject("swiglu_limit", "must be positive");
  spec.intermediate_size = spec.moe.expert_ffn;
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  if (config.has("mlp_layer_types")) {
    for (const std::string& type : first_layers(config, "mlp_layer_types", spec.num_layers, {"hash_moe", "moe"}))
      spec.moe.hash_layers.push_back(type == "hash_moe");
  } else {
    const int64_t hashed = std::min(config.integer("num_hash_layers", 3, 0, 1 << 20), spec.num_layers);
    for (int64_t i = 0; i < spec.num_layers; ++i) spec.moe.hash_layers.push_back(i < hashed);
  }
  // DeepSeek's own tensor names, which transformers' save_pretrained writes back.
  WeightNames& n = spec.names;
  n.lm_head = "head";
  n.attn_norm = "attn_norm";
  n.mlp_norm = "ffn_norm";
  n.router = "ffn.gate";
  n.score_bias = "ffn.gate.bias";
  n.experts = "ffn.experts";
  n.shared_expert = "ffn.shared_experts";
  n.expert_gate = "w1";
  n.expert_up = "w3";
  n.expert_down = "w2";
  return spec;
}

const ArchitectureRegistration kDeepseekV4(
    {"deepseek_v4",
     "DeepSeek-V4: hyper-connected residual streams, one-key-head attention over a sliding window plus compressed "
     "keys (sparse with an indexer, or heavily compressed), hash- then sqrt(softplus)-routed experts",
     read_deepseek_v4,
     {"hc_mult, hc_sinkhorn_iters, hc_eps", "layer_types (or compress_ratios)",
      "compress_rates (or compress_rate_csa, compress_rate_hca)", "sliding_window", "q_lora_rank", "head_dim",
      "partial_rotary_factor (or qk_rope_head_dim)", "o_groups, o_lora_rank",
      "index_n_heads, index_head_dim, index_topk",
      "rope_parameters main|compress (default|linear|yarn), compress_rope_theta",
      "mlp_layer_types hash_moe|moe (or num_hash_layers)", "n_routed_experts, num_experts_per_tok, "
      "moe_intermediate_size, n_shared_experts, routed_scaling_factor, scoring_func sqrtsoftplus|sigmoid, swiglu_limit",
      "tie_word_embeddings"},
     {"DeepseekV4ForCausalLM"}});

}  // namespace
}  // namespace canrun
