#include "models/vision_language.h"

#include <cmath>

#include "models/llama_like.h"

namespace canrun {
namespace {

// mrope_section from the text config's rope parameters: three counts of frequencies (t, h, w)
// summing to half the rotary width.
std::vector<int64_t> read_mrope_section(const ConfigReader& text, std::vector<int64_t> section, int64_t rotary_dim) {
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!text.has(key)) continue;
    const ConfigReader rope = text.object(key);
    if (!rope.has("mrope_section")) break;
    const Json& list = rope.json()["mrope_section"];
    if (!list.is_array() || list.size() != 3) rope.reject("mrope_section", "must be a list of 3 whole numbers");
    section.clear();
    for (const Json& item : list) {
      if (!item.is_number_integer() || item.get<int64_t>() < 0)
        rope.reject("mrope_section", "must be a list of 3 whole numbers");
      section.push_back(item.get<int64_t>());
    }
    break;
  }
  if (section[0] + section[1] + section[2] != rotary_dim / 2)
    text.reject("rope_parameters", "mrope_section must sum to half the rotary width (" +
                                       std::to_string(rotary_dim / 2) + ")");
  return section;
}

std::vector<int64_t> read_index_list(const ConfigReader& config, const std::string& key, std::vector<int64_t> fallback,
                                     int64_t limit) {
  if (!config.has(key)) return fallback;
  const Json& list = config.json()[key];
  if (!list.is_array()) config.reject(key, "must be a list of block indices");
  std::vector<int64_t> values;
  for (const Json& item : list) {
    if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() >= limit)
      config.reject(key, "must list block indices below depth (" + std::to_string(limit) + ")");
    values.push_back(item.get<int64_t>());
  }
  return values;
}

// vision_config with the defaults of transformers' config class of `kind`.
VisionTowerSpec read_vision_tower(const ConfigReader& config, VisionTowerKind kind, bool deepstack) {
  VisionTowerSpec spec;
  spec.kind = kind;
  const bool qwen2 = kind == VisionTowerKind::kQwen2Vl, qwen2_5 = kind == VisionTowerKind::kQwen2_5Vl;
  if (!deepstack || kind != VisionTowerKind::kQwen3Vl) spec.deepstack_indexes.clear();
  spec.depth = config.integer("depth", qwen2 || qwen2_5 ? 32 : spec.depth, 1, 1024);
  if (qwen2) {  // embed_dim wide, hidden_size out, mlp_ratio times wider inside
    spec.hidden = config.integer("embed_dim", 1280, 1, 1 << 16);
    spec.out_hidden = config.integer("hidden_size", 3584, 1, 1 << 20);
    spec.intermediate = spec.hidden * config.integer("mlp_ratio", 4, 1, 64);
  } else {
    spec.hidden = config.integer("hidden_size", qwen2_5 ? 3584 : spec.hidden, 1, 1 << 16);
    spec.intermediate = config.integer("intermediate_size", qwen2_5 ? 3420 : spec.intermediate, 1, 1 << 20);
    spec.out_hidden = config.integer("out_hidden_size", spec.out_hidden, 1, 1 << 20);
  }
  spec.heads = config.integer("num_heads", spec.heads, 1, 1024);
  if (spec.hidden % spec.heads != 0 || spec.head_dim() % 4 != 0)
    config.reject("num_heads", "must divide the tower's width into heads of a multiple of 4 values");
  spec.in_channels = config.integer("in_channels", spec.in_channels, 3, 3);
  spec.patch_size = config.integer("patch_size", qwen2 || qwen2_5 ? 14 : spec.patch_size, 1, 1024);
  spec.temporal_patch_size = config.integer("temporal_patch_size", spec.temporal_patch_size, 1, 64);
  spec.merge_size = config.integer("spatial_merge_size", spec.merge_size, 1, 64);
  if (qwen2 || qwen2_5) {
    spec.num_position_embeddings = 0;
  } else {
    spec.num_position_embeddings =
        config.integer("num_position_embeddings", spec.num_position_embeddings, 1, int64_t{1} << 24);
    const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(spec.num_position_embeddings)));
    if (side * side != spec.num_position_embeddings)
      config.reject("num_position_embeddings", "must be a square number (a side x side grid)");
  }
  if (!spec.deepstack_indexes.empty())
    spec.deepstack_indexes = read_index_list(config, "deepstack_visual_indexes", spec.deepstack_indexes, spec.depth);
  spec.activation =
      read_activation(config, "hidden_act", qwen2 ? "quick_gelu" : qwen2_5 ? "silu" : "gelu_pytorch_tanh", "vision");
  if (config.has("rope_parameters")) spec.rope_theta = config.object("rope_parameters").number("rope_theta", 10000.0);
  if (qwen2_5) {
    spec.window_size = config.integer("window_size", 112, 1, 1 << 20);
    if (spec.window_size / spec.merge_size / spec.patch_size < 1)
      config.reject("window_size", "must span at least one merged patch (spatial_merge_size x patch_size pixels)");
    spec.full_attention_blocks = read_index_list(config, "fullatt_block_indexes", {7, 15, 23, 31}, spec.depth);
  }
  return spec;
}

}  // namespace

DecoderSpec read_vision_language(const ConfigReader& config, const VisionLanguageDefaults& defaults,
                                 const std::function<DecoderSpec(const ConfigReader& text)>& read_text) {
  // Checkpoints saved before transformers 5 (Qwen2-VL, Qwen2.5-VL) keep the text model's fields at the top.
  Json text_json = config.has("text_config") ? config.object("text_config").json() : config.json();
  text_json["model_type"] = defaults.model_type;
  const ConfigReader text(text_json, config.path() + ": text_config");
  DecoderSpec spec = read_text(text);
  spec.tie_embeddings = config.boolean("tie_word_embeddings", text.boolean("tie_word_embeddings", false));
  spec.rope.mrope_section = read_mrope_section(text, defaults.mrope_section, spec.rope.rotary_dim);
  spec.names.embed = "model.language_model.embed_tokens";
  spec.names.layers = "model.language_model.layers";
  spec.names.final_norm = "model.language_model.norm";
  spec.image_token_id =
      static_cast<int32_t>(config.integer("image_token_id", defaults.image_token_id, 0, spec.vocab_size - 1));
  const ConfigReader vision = config.has("vision_config")
                                  ? config.object("vision_config")
                                  : ConfigReader(Json::object(), config.path() + ": vision_config");
  spec.vision = read_vision_tower(vision, defaults.tower, defaults.deepstack);
  spec.rope.mrope_interleaved = defaults.tower == VisionTowerKind::kQwen3Vl;
  if (deepstack_layers(spec) > spec.num_layers)
    config.reject("vision_config", "lists more deepstack_visual_indexes than the text model has layers");
  return spec;
}

}  // namespace canrun
