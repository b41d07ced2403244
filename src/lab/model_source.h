// Where a check's weights come from: a local folder, the Hugging Face cache, or synthetic
// weights made from a catalog entry's real config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lab/catalog.h"
#include "util/json.h"

namespace canrun {

struct ModelSource {
  std::string argument;  // MODEL as given to canrun check
  // The Hub or catalog id; for a local folder, --model-id, else the catalog id its config.json's
  // _name_or_path names, else the folder as given.
  std::string model_id;
  std::string kind;      // "local folder", "hugging face cache" or "synthetic"
  std::string dir;       // the checkpoint folder (for synthetic: where it is made)
  std::optional<std::string> revision;  // the cache snapshot's commit
  std::optional<CatalogEntry> entry;    // the catalog's entry for model_id, when it has one
  Json synthetic_config;                // for synthetic weights: the catalog's config
  bool synthetic() const { return kind == "synthetic"; }
  std::string weights() const { return synthetic() ? "synthetic" : "real"; }
};

// MODEL as `canrun check` reads it: an existing folder; else, unless `force_synthetic`, a Hub id
// in the Hugging Face cache; else a catalog id, with synthetic weights. Reads configs but makes
// no weights (see make_synthetic_checkpoint). `model_id` (--model-id) names the model a folder or
// cached snapshot holds, so its row joins that catalog entry. Errors say where it looked.
ModelSource resolve_model(const std::string& model, bool force_synthetic, const std::vector<CatalogEntry>& catalog,
                          const std::string& model_id = "");

}  // namespace canrun
