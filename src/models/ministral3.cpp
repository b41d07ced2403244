// Ministral 3 (ministral3; the language model of Mistral's 2025-12 Ministral 3 checkpoints): the
// Mistral layout with yarn rotary and Llama 4's attention temperature on every layer, each query
// times 1 + llama_4_scaling_beta * log(1 + floor(p / original_max_position_embeddings)).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// Ministral3Config's rope when config.json names none.
Json default_rope(int64_t max_positions) {
  return {{"rope_type", "yarn"}, {"rope_theta", 1000000.0}, {"factor", 16.0},
          {"original_max_position_embeddings", 16384}, {"max_position_embeddings", max_positions},
          {"beta_fast", 32.0}, {"beta_slow", 1.0}, {"mscale_all_dim", 1.0}, {"mscale", 1.0},
          {"llama_4_scaling_beta", 0.1}};
}

DecoderSpec read_ministral3(const ConfigReader& original) {
  Json json = original.json();
  if (!original.has("rope_parameters") && !original.has("rope_scaling"))
    json["rope_parameters"] = default_rope(original.integer("max_position_embeddings", 262144, 1, int64_t{1} << 30));
  const ConfigReader config(json, original.path());
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 131072;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 14336;
  defaults.num_layers = 34;
  defaults.num_heads = 32;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 128;
  defaults.max_positions = 262144;
  defaults.norm_eps = 1e-5;
  defaults.rope_theta = 1000000.0;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.sliding_window = uniform_windows(config, spec.num_layers, 0);
  const char* rope_key = config.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const ConfigReader rope = config.object(rope_key);
  if (rope.has("llama_4_scaling_beta")) {
    spec.query_temperature.scale = static_cast<float>(rope.number("llama_4_scaling_beta", std::nullopt));
    spec.query_temperature.floor =
        rope.integer("original_max_position_embeddings", std::nullopt, 1, int64_t{1} << 30);
  }
  return spec;
}

const ArchitectureRegistration kMinistral3(
    {"ministral3", "Ministral 3: Mistral layout, yarn rotary, Llama 4's attention temperature on every layer",
     read_ministral3,
     {"rope_parameters with llama_4_scaling_beta and original_max_position_embeddings", "sliding_window",
      "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"},
     {"Ministral3ForCausalLM"}});

}  // namespace
}  // namespace canrun
