// DeepSeek-V3 / R1 (and Kimi-K2, whose config names DeepseekV3ForCausalLM), DeepSeek-V3.2
// (deepseek_v32: sparse attention), GLM-5 (glm_moe_dsa) and GLM-4.7-Flash (glm4_moe_lite):
// deepseek_v2's latent attention with the rope part rotated in pairs or, with rope_interleave
// false, in halves; routed experts chosen by sigmoid scores plus the router's
// e_score_correction_bias among the best groups (noaux_tc), weighted by the unbiased scores,
// renormalised when norm_topk_prob and scaled by routed_scaling_factor; shared experts.
#include <algorithm>

#include "models/families_common.h"
#include "models/latent_decoder.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

// DeepseekV3Config's sizes (DeepseekV32Config's, but for its max_position_embeddings).
LlamaLikeDefaults deepseek_v3_sizes(int64_t max_positions) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 129280;
  defaults.hidden_size = 7168;
  defaults.intermediate_size = 18432;
  defaults.num_layers = 61;
  defaults.num_heads = 128;
  defaults.max_positions = max_positions;
  return defaults;
}

DecoderSpec read_deepseek_v3(const ConfigReader& config) {
  DecoderSpec spec = read_latent_decoder(config, deepseek_v3_sizes(4096), LatentDefaults{});
  spec.rope_interleaved = config.boolean("rope_interleave", true);
  spec.moe_layers = sparse_from(config, spec.num_layers, 3);
  read_noaux_tc_experts(config, spec, {256, 8, 2048, 8, 4, 2.5});
  return spec;
}

DecoderSpec read_glm4_moe_lite(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 154880;
  defaults.hidden_size = 2048;
  defaults.intermediate_size = 10240;
  defaults.num_layers = 47;
  defaults.num_heads = 20;
  defaults.max_positions = 202752;
  defaults.norm_eps = 1e-5;
  LatentDefaults latent;
  latent.q_lora_rank = 768;
  latent.nope_dim = 192;
  latent.value_dim = 256;
  DecoderSpec spec = read_latent_decoder(config, defaults, latent);
  spec.rope_interleaved = config.boolean("rope_interleave", true);
  // transformers' glm4_moe_lite ignores first_k_dense_replace: its default keeps layer 0 dense.
  spec.moe_layers = mlp_layer_types(config, spec.num_layers, 1);
  read_noaux_tc_experts(config, spec, {64, 4, 1536, 1, 1, 1.8});
  return spec;
}

// What a DSA family's config class supplies when config.json omits it.
struct SparseAttentionDefaults {
  LlamaLikeDefaults sizes;
  LatentDefaults latent;
  NoauxRouterDefaults router;
  int64_t index_heads = 64;
};

// deepseek_v3 with a DSA indexer in each layer's attention (deepseek_v32, glm_moe_dsa): the
// query always comes through q_lora_rank, the rope part always rotates in pairs.
DecoderSpec read_sparse_attention_decoder(const ConfigReader& config, const SparseAttentionDefaults& defaults) {
  DecoderSpec spec = read_latent_decoder(config, defaults.sizes, defaults.latent);
  if (spec.mla.q_lora_rank == 0)
    reject_option(config, "q_lora_rank", "null", spec.model_type,
                  "its attention always has q_a_proj; supported: a rank");
  spec.rope_interleaved = true;
  LatentAttentionSpec& mla = spec.mla;
  mla.index_topk = config.integer("index_topk", 2048, 1, int64_t{1} << 24);
  mla.index_heads = config.integer("index_n_heads", defaults.index_heads, 1, 4096);
  mla.index_head_dim = config.integer("index_head_dim", 128, mla.rope_dim, 8192);
  spec.moe_layers = mlp_layer_types(config, spec.num_layers, config.integer("first_k_dense_replace", 3, 0, 1 << 20));
  read_noaux_tc_experts(config, spec, defaults.router);
  return spec;
}

DecoderSpec read_deepseek_v32(const ConfigReader& config) {
  return read_sparse_attention_decoder(config,
                                       {deepseek_v3_sizes(163840), LatentDefaults{}, {256, 8, 2048, 8, 4, 2.5}, 64});
}

// glm_moe_dsa's indexer_types ("full" | "shared" per layer), else index_topk_pattern ("F"/"S"
// letters or those words), else a layer is full when max(i - offset + 1, 0) is a multiple of
// index_topk_freq (default 1: all full; offset index_skip_topk_offset, default 2).
std::vector<bool> shared_indexer_layers(const ConfigReader& config, int64_t num_layers) {
  std::vector<bool> shared(static_cast<size_t>(num_layers), false);
  const std::string key = config.has("indexer_types") ? "indexer_types" : "index_topk_pattern";
  if (config.has(key)) {
    const Json& types = config.json()[key];
    const bool letters = types.is_string();
    const size_t count = letters ? types.get_ref<const std::string&>().size() : types.size();
    if ((!letters && !types.is_array()) || static_cast<int64_t>(count) != num_layers)
      config.reject(key, "must give \"full\" or \"shared\" (F or S) for each of the " +
                             std::to_string(num_layers) + " layers");
    for (int64_t i = 0; i < num_layers; ++i) {
      const std::string type = letters ? std::string(1, types.get<std::string>()[static_cast<size_t>(i)])
                                       : types[static_cast<size_t>(i)].is_string()
                                             ? types[static_cast<size_t>(i)].get<std::string>()
                                             : std::string();
      if (type != (letters ? "F" : "full") && type != (letters ? "S" : "shared"))
        config.reject(key, "entry " + std::to_string(i) + " must be " + (letters ? "F or S" : "\"full\" or \"shared\""));
      shared[static_cast<size_t>(i)] = type == (letters ? "S" : "shared");
    }
  } else {
    const int64_t frequency = std::max<int64_t>(config.integer("index_topk_freq", 1, 0, 1 << 20), 1);
    const int64_t offset = config.integer("index_skip_topk_offset", 2, -(1 << 20), 1 << 20);
    for (int64_t i = 0; i < num_layers; ++i)
      shared[static_cast<size_t>(i)] = std::max<int64_t>(i - offset + 1, 0) % frequency != 0;
  }
  if (shared[0]) config.reject(key, "layer 0 must run its own indexer: a shared layer reuses an earlier one's choice");
  return shared;
}

// GLM-5 (glm_moe_dsa): deepseek_v32's blocks with the indexer's rope in pairs and layers that
// reuse the last full layer's choice.
DecoderSpec read_glm_moe_dsa(const ConfigReader& config) {
  LlamaLikeDefaults sizes;
  sizes.vocab_size = 154880;
  sizes.hidden_size = 6144;
  sizes.intermediate_size = 12288;
  sizes.num_layers = 78;
  sizes.num_heads = 64;
  sizes.max_positions = 202752;
  sizes.norm_eps = 1e-5;
  LatentDefaults latent;
  latent.q_lora_rank = 2048;
  latent.nope_dim = 192;
  latent.value_dim = 256;
  DecoderSpec spec = read_sparse_attention_decoder(config, {sizes, latent, {256, 8, 2048, 1, 1, 2.5}, 32});
  spec.mla.index_rope_pairs = true;
  spec.mla.shared_index = shared_indexer_layers(config, spec.num_layers);
  return spec;
}

const std::vector<std::string> kNoauxOptions = {
    "q_lora_rank (null: q_proj)", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "rope_interleave", "attention_bias", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
    "n_shared_experts", "routed_scaling_factor", "n_group", "topk_group", "norm_topk_prob",
    "rope default|linear|dynamic|yarn|llama3 (mscale_all_dim scales the softmax)"};

std::vector<std::string> with(std::vector<std::string> options, const std::string& more) {
  options.insert(options.begin() + 5, more);
  return options;
}

const ArchitectureRegistration kDeepseekV3(
    {"deepseek_v3",
     "DeepSeek-V3/R1, Kimi-K2: latent attention, dense then sigmoid-routed (noaux_tc) + shared experts",
     read_deepseek_v3, with(kNoauxOptions, "first_k_dense_replace"), {"DeepseekV3ForCausalLM"}});

const ArchitectureRegistration kDeepseekV32(
    {"deepseek_v32", "DeepSeek-V3.2: deepseek_v3 with sparse attention (DSA: an indexer keeps each query's top-k keys)",
     read_deepseek_v32,
     with(kNoauxOptions, "index_topk, index_n_heads, index_head_dim, mlp_layer_types or first_k_dense_replace"),
     {"DeepseekV32ForCausalLM"}});

const ArchitectureRegistration kGlmMoeDsa(
    {"glm_moe_dsa", "GLM-5: deepseek_v32's blocks, indexer rope in pairs, layers sharing an earlier layer's choice",
     read_glm_moe_dsa,
     with(kNoauxOptions, "index_topk, index_n_heads, index_head_dim, indexer_types (or index_topk_pattern, "
                         "index_topk_freq, index_skip_topk_offset), mlp_layer_types or first_k_dense_replace"),
     {"GlmMoeDsaForCausalLM"}});

const ArchitectureRegistration kGlm4MoeLite(
    {"glm4_moe_lite", "GLM-4.7-Flash: deepseek_v3's latent attention and sigmoid-routed experts",
     read_glm4_moe_lite, with(kNoauxOptions, "mlp_layer_types (first_k_dense_replace ignored, as transformers does)"),
     {"Glm4MoeLiteForCausalLM"}});

}  // namespace
}  // namespace canrun
