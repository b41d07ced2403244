// The lab's model catalog: data/catalog.jsonl (made by tools/build_catalog.py), one Hub
// model per line with its real config values, popularity and whether the sweep tests it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace canrun {

// One popularity signal as the snapshot recorded it; rank is within the model's task.
struct PopularitySignal {
  std::optional<int64_t> count;
  std::optional<int64_t> rank;
  std::string as_of;   // snapshot date, empty when the signal is absent
  std::string source;  // URL of the snapshot
  std::string note;    // why the signal is absent, when it is
};

struct CatalogEntry {
  int64_t line = 0;  // 1-based line in the file, for messages
  std::string id;
  std::string task;
  std::string model_type;  // empty when the catalog's source had no config to take it from
  std::vector<std::string> architectures;  // the config's model classes; empty when the source gave none
  std::optional<double> params_b;  // as published, in billions; null when unknown
  std::string license;             // empty when unknown
  Json config;                     // the snapshot's config values (null = not seen in the source)
  // An encoder's sentence-transformers pieces as the snapshot found them (modules, pooling,
  // normalize, max_seq_length, classifier...); null when none were found.
  Json sentence_transformers;
  PopularitySignal downloads;
  PopularitySignal trending;
  bool selected = false;
  std::string exclusion;  // the file's reason for a model not selected
};

// The tasks the catalog covers.
const std::vector<std::string>& catalog_tasks();

// The tasks of encoder models: sentence-similarity, feature-extraction, text-ranking,
// text-classification.
const std::vector<std::string>& encoder_tasks();
bool is_encoder_task(const std::string& task);

// Whether canrun has the entry's family (by model_type, or by a class its architectures name)
// for the entry's task: for an encoder task, a family that reads the entry's config as an encoder
// (its forward pass gives hidden states, not logits).
bool family_supported(const CatalogEntry& entry);

// $CANRUN_CATALOG if set, else data/catalog.jsonl of the source tree canrun was built from.
std::string default_catalog_path();

// Reads and validates the whole file; errors name the file, line and field.
std::vector<CatalogEntry> load_catalog(const std::string& path);

struct CatalogFilter {
  std::string task;        // exact; empty = any
  bool selected_only = false;
  std::string search;      // case-insensitive substring of the id; empty = any
  std::string model_type;  // exact; empty = any
};

std::vector<CatalogEntry> filter_catalog(const std::vector<CatalogEntry>& entries, const CatalogFilter& filter);

// Why the lab does not test this model now, or "" when it does. An architecture missing from
// the registry is checked first, at run time, so the reason goes away when the family lands.
std::string exclusion_reason(const CatalogEntry& entry);

// The config values as a config.json would hold them: the snapshot's annotations (keys
// starting with '_', "vision_config") dropped, "extra" values of the top-level config merged
// in, and model_type set; fields the source lacked stay null (absent to transformers). The
// snapshot's num_experts is also written under the other names families read it by.
Json hf_config(const CatalogEntry& entry);

// params_b as a whole parameter count, when the snapshot has it.
std::optional<int64_t> published_parameters(const CatalogEntry& entry);

}  // namespace canrun
