#include "lab/catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "util/json.h"

namespace canrun {
namespace {

// Far above a catalog of every Hub model's config (a few KiB a line).
constexpr size_t kMaxCatalogBytes = size_t{256} << 20;

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::optional<int64_t> optional_integer(const ConfigReader& reader, const std::string& key, int64_t min_value) {
  if (!reader.has(key)) return std::nullopt;
  return reader.integer(key, std::nullopt, min_value, INT64_MAX);
}

std::string optional_string(const ConfigReader& reader, const std::string& key) {
  return reader.has(key) ? reader.string(key, std::nullopt) : std::string();
}

PopularitySignal read_signal(const ConfigReader& popularity, const std::string& key) {
  const ConfigReader signal = popularity.object(key);
  PopularitySignal result;
  result.count = optional_integer(signal, "count", 0);
  result.rank = optional_integer(signal, "rank", 1);
  result.as_of = optional_string(signal, "as_of");
  result.source = optional_string(signal, "source");
  result.note = optional_string(signal, "note");
  // A rank without its date and source could not be checked or compared over time.
  if (result.rank && (result.as_of.empty() || result.source.empty()))
    signal.reject("rank", "needs 'as_of' and 'source'");
  if (!result.rank && result.note.empty()) signal.reject("note", "must say why the rank is absent");
  return result;
}

CatalogEntry read_entry(const Json& json, const std::string& where) {
  const ConfigReader row(json, where);
  CatalogEntry entry;
  entry.id = row.string("id", std::nullopt);
  if (entry.id.empty()) row.reject("id", "must not be empty");
  entry.task = row.string("task", std::nullopt);
  const auto& tasks = catalog_tasks();
  if (std::find(tasks.begin(), tasks.end(), entry.task) == tasks.end()) {
    std::string known;
    for (const std::string& task : tasks) known += (known.empty() ? "" : ", ") + task;
    row.reject("task", "'" + entry.task + "' is not one of " + known);
  }
  // An encoder whose config no source had has a null model_type (the catalog says why it is not
  // selected); text-generation models always name theirs.
  const bool type_unknown = json.contains("model_type") && json["model_type"].is_null();
  if (type_unknown && !is_encoder_task(entry.task)) row.reject("model_type", "must not be null for a " + entry.task + " model");
  if (!type_unknown) entry.model_type = row.string("model_type", std::nullopt);
  if (!type_unknown && entry.model_type.empty()) row.reject("model_type", "must not be empty");
  if (row.has("architectures")) {
    const Json& names = json["architectures"];
    if (!names.is_array()) row.reject("architectures", "must be a list of class names");
    for (const Json& name : names) {
      if (!name.is_string()) row.reject("architectures", "must be a list of class names");
      entry.architectures.push_back(name.get<std::string>());
    }
  }
  if (row.has("params_b")) {
    entry.params_b = row.number("params_b", std::nullopt);
    if (*entry.params_b <= 0) row.reject("params_b", "must be positive");
  }
  entry.license = optional_string(row, "license");
  entry.config = row.object("config").json();
  if (json.contains("sentence_transformers") && !json["sentence_transformers"].is_null())
    entry.sentence_transformers = row.object("sentence_transformers").json();
  const ConfigReader popularity = row.object("popularity");
  entry.downloads = read_signal(popularity, "downloads");
  entry.trending = read_signal(popularity, "trending");
  if (!row.has("selected")) row.reject("selected", "is required but missing");
  entry.selected = row.boolean("selected", false);
  entry.exclusion = optional_string(row, "exclusion");
  if (entry.selected && !entry.exclusion.empty()) row.reject("exclusion", "must be null for a selected model");
  if (!entry.selected && entry.exclusion.empty()) row.reject("exclusion", "must give the reason a model is not selected");
  return entry;
}

}  // namespace

const std::vector<std::string>& catalog_tasks() {
  static const std::vector<std::string> tasks = {"text-generation",  "image-text-to-text", "sentence-similarity",
                                                 "feature-extraction", "text-ranking",      "text-classification"};
  return tasks;
}

const std::vector<std::string>& encoder_tasks() {
  static const std::vector<std::string> tasks = {"sentence-similarity", "feature-extraction", "text-ranking",
                                                 "text-classification"};
  return tasks;
}

bool is_encoder_task(const std::string& task) {
  const auto& tasks = encoder_tasks();
  return std::find(tasks.begin(), tasks.end(), task) != tasks.end();
}

std::string default_catalog_path() {
  if (const char* path = std::getenv("CANRUN_CATALOG"); path && *path) return path;
  return std::string(CANRUN_DATA_DIR) + "/catalog.jsonl";
}

std::vector<CatalogEntry> load_catalog(const std::string& path) {
  std::istringstream in(read_text_file(path, kMaxCatalogBytes));
  std::vector<CatalogEntry> entries;
  std::set<std::string> ids;
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line);
    CatalogEntry entry = read_entry(parse_json(text, where, ErrorKind::kCheckpoint), where);
    entry.line = line;
    if (!ids.insert(entry.id).second)
      fail(ErrorKind::kCheckpoint, where + ": field 'id': '" + entry.id + "' appears on an earlier line too");
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) fail(ErrorKind::kCheckpoint, path + ": the catalog has no models");
  return entries;
}

std::vector<CatalogEntry> filter_catalog(const std::vector<CatalogEntry>& entries, const CatalogFilter& filter) {
  const std::string needle = lowercase(filter.search);
  std::vector<CatalogEntry> kept;
  for (const CatalogEntry& entry : entries) {
    if (!filter.task.empty() && entry.task != filter.task) continue;
    if (filter.selected_only && !entry.selected) continue;
    if (!filter.model_type.empty() && entry.model_type != filter.model_type) continue;
    if (!needle.empty() && lowercase(entry.id).find(needle) == std::string::npos) continue;
    kept.push_back(entry);
  }
  return kept;
}

bool family_supported(const CatalogEntry& entry) {
  if (entry.model_type.empty()) return false;
  const Architecture* architecture = resolve_architecture(entry.model_type, entry.architectures);
  if (architecture == nullptr) return false;
  if (!is_encoder_task(entry.task)) return true;
  // Embeddings come from any family: a sentence-transformers folder runs a text-generation
  // family's model as its base model (Qwen3-Embedding, e5-mistral).
  if (entry.task == "sentence-similarity" || entry.task == "feature-extraction") return true;
  // Ranking and classification read an encoder's head: the family must give hidden states for
  // this config; a config the family rejects is judged by its reading of its bare model_type
  // and classes.
  const auto gives_hidden_states = [&](const Json& config) {
    return architecture->read_spec(ConfigReader(config, entry.id)).output == ModelOutput::kHiddenStates;
  };
  try {
    return gives_hidden_states(hf_config(entry));
  } catch (const Error&) {
    try {
      Json bare = {{"model_type", entry.model_type}};
      if (!entry.architectures.empty()) bare["architectures"] = entry.architectures;
      return gives_hidden_states(bare);
    } catch (const Error&) {
      return false;
    }
  }
}

std::string exclusion_reason(const CatalogEntry& entry) {
  if (entry.model_type.empty()) return entry.exclusion;  // the file says why (no config)
  if (!family_supported(entry))
    return "architecture not supported: " + entry.model_type + (is_encoder_task(entry.task) ? " (as an encoder)" : "");
  return entry.exclusion;
}

Json hf_config(const CatalogEntry& entry) {
  Json config = Json::object();
  // A field the catalog's source did not have is left out, so that every reader of the config
  // (canrun, transformers) takes its own default for it rather than a null.
  std::set<std::string> absent;
  if (entry.config.contains("_fields_not_present_in_source") && entry.config["_fields_not_present_in_source"].is_array())
    for (const Json& key : entry.config["_fields_not_present_in_source"])
      if (key.is_string()) absent.insert(key.get<std::string>());
  for (const auto& [key, value] : entry.config.items()) {
    if (key.starts_with("_") || key == "extra") continue;
    if (value.is_null() && absent.count(key)) continue;
    config[key] = value;
  }
  // "extra" also holds nested values as "text_config.x"; only top-level ones belong here.
  if (entry.config.contains("extra") && entry.config["extra"].is_object())
    for (const auto& [key, value] : entry.config["extra"].items())
      if (key.find('.') == std::string::npos) config[key] = value;
  // A multimodal config's text fields come flattened to the top level, its nested ones as
  // "text_config.x": they are also given back as the text_config its family reads.
  if (entry.config.contains("extra") && entry.config["extra"].is_object()) {
    Json text = Json::object();
    for (const auto& [key, value] : entry.config["extra"].items())
      if (key.starts_with("text_config.")) text[key.substr(12)] = value;
    if (!text.empty()) {
      for (const auto& [key, value] : config.items()) text.emplace(key, value);
      config["text_config"] = text;
    }
  }
  // The snapshot names the routed-expert count num_experts whatever the family's config calls it
  // (deepseek_v3 and nemotron_h read n_routed_experts, mixtral num_local_experts).
  if (config.contains("num_experts") && config["num_experts"].is_number_integer())
    for (const char* key : {"n_routed_experts", "num_local_experts"})
      if (!config.contains(key) || config[key].is_null()) config[key] = config["num_experts"];
  config["model_type"] = entry.model_type;
  if (!entry.architectures.empty()) config["architectures"] = entry.architectures;
  return config;
}

std::optional<int64_t> published_parameters(const CatalogEntry& entry) {
  if (!entry.params_b) return std::nullopt;
  return std::llround(*entry.params_b * 1e9);
}

}  // namespace canrun
