#include "models/stored_names.h"

#include <vector>

namespace canrun {
namespace {

// The base model's own names (not its layers' inner ones, which are relative to names.layers).
std::vector<std::string*> base_model_names(WeightNames& names) {
  return {&names.embed,       &names.positions,   &names.token_types,     &names.embed_norm,
          &names.layers,      &names.final_norm,  &names.project_in,      &names.project_out,
          &names.per_layer_embed, &names.per_layer_model_projection, &names.per_layer_projection_norm,
          &names.relative_attention_bias};
}

void prefix_base_model(WeightNames& names, const std::string& prefix) {
  for (std::string* name : base_model_names(names))
    if (!name->empty()) *name = prefix + *name;
}

// A causal LM's base model saved alone (Qwen3Model in a sentence-transformers folder) stores
// its names without the "model." the causal LM class puts before them.
bool strip_causal_lm_prefix(WeightNames& names, const std::function<bool(const std::string&)>& stored) {
  const std::string prefix = "model.";
  if (!names.embed.starts_with(prefix) || !stored(names.embed.substr(prefix.size()) + ".weight")) return false;
  for (std::string* name : base_model_names(names))
    if (name->starts_with(prefix)) name->erase(0, prefix.size());
  return true;
}

}  // namespace

void follow_stored_names(DecoderSpec& spec, const std::function<bool(const std::string&)>& stored) {
  if (stored(spec.names.embed + ".weight")) return;
  std::vector<std::string> prefixes = {spec.base_model_prefix};
  prefixes.insert(prefixes.end(), spec.other_base_model_prefixes.begin(), spec.other_base_model_prefixes.end());
  for (const std::string& prefix : prefixes) {
    if (prefix.empty() || !stored(prefix + spec.names.embed + ".weight")) continue;
    spec.base_model_prefix = prefix;
    return prefix_base_model(spec.names, prefix);
  }
  if (strip_causal_lm_prefix(spec.names, stored)) return;
  if (!spec.vision || !stored("model.embed_tokens.weight")) return;
  spec.names.embed = "model.embed_tokens";
  spec.names.layers = "model.layers";
  spec.names.final_norm = "model.norm";
  spec.vision->prefix = "visual.";
}

}  // namespace canrun
