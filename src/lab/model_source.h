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
  // "local folder", "hugging face cache", "synthetic", or "unavailable" (a Hub id whose weights
  // are neither cached nor downloadable: `unavailable_reason` says why)
  std::string kind;
  std::string dir;       // the checkpoint folder (for synthetic: where it is made)
  std::optional<std::string> revision;  // the cache snapshot's commit
  std::optional<CatalogEntry> entry;    // the catalog's entry for model_id, when it has one
  Json synthetic_config;                // for synthetic weights: the catalog's config
  std::string unavailable_reason;
  bool synthetic() const { return kind == "synthetic"; }
  bool unavailable() const { return kind == "unavailable"; }
  // "real" or "synthetic"; "" when there are none to name.
  std::string weights() const { return synthetic() ? "synthetic" : unavailable() ? "" : "real"; }
};

// Where the weights of a model that is not a local folder come from.
enum class WeightsPolicy {
  kReal,                // canrun check: the Hugging Face cache, else downloaded into it, else unavailable
  kSynthetic,           // --synthetic: made from the catalog's config, even when real ones exist
  kCachedOrSynthetic,   // canrun sweep: the cache, else synthetic (no downloads)
};

// MODEL as `canrun check` and `sweep` read it: an existing folder (unless kSynthetic); else a Hub
// id ORG/NAME[@REVISION] found by `policy`; synthetic weights need a catalog id. Reads configs but
// makes no weights (see make_synthetic_checkpoint). `model_id` (--model-id) names the model a
// folder or cached snapshot holds, so its row joins that catalog entry. Errors say where it looked.
ModelSource resolve_model(const std::string& model, WeightsPolicy policy, const std::vector<CatalogEntry>& catalog,
                          const std::string& model_id = "");

}  // namespace canrun
