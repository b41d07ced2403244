#include "models/stored_names.h"

namespace canrun {
namespace {

void prefix_base_model(WeightNames& names, const std::string& prefix) {
  for (std::string* name : {&names.embed, &names.positions, &names.token_types, &names.embed_norm, &names.layers,
                            &names.final_norm})
    if (!name->empty()) *name = prefix + *name;
}

}  // namespace

void follow_stored_names(DecoderSpec& spec, const std::function<bool(const std::string&)>& stored) {
  if (stored(spec.names.embed + ".weight")) return;
  if (!spec.base_model_prefix.empty() && stored(spec.base_model_prefix + spec.names.embed + ".weight"))
    return prefix_base_model(spec.names, spec.base_model_prefix);
  if (!spec.vision || !stored("model.embed_tokens.weight")) return;
  spec.names.embed = "model.embed_tokens";
  spec.names.layers = "model.layers";
  spec.names.final_norm = "model.norm";
  spec.vision->prefix = "visual.";
}

}  // namespace canrun
