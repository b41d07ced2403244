#include "serve/api.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "lab/catalog_plan.h"
#include "lab/version_diff.h"
#include "serve/http_error.h"
#include "serve/views.h"
#include "util/version.h"

namespace canrun {
namespace {

// Reasons longer than this are cut in the list; /api/model has the whole message.
constexpr size_t kReasonLength = 300;

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}
Json or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

std::string cut_utf8(const std::string& text, size_t length) {
  if (text.size() <= length) return text;
  while (length > 0 && (static_cast<unsigned char>(text[length]) & 0xC0) == 0x80) --length;
  return text.substr(0, length) + "…";
}

Json pair_json(const PairRows* pair) {
  if (!pair) return nullptr;
  return {{"compiler", pair->pair.compiler}, {"library", pair->pair.library}, {"file", pair->file_name}};
}

Json dataset_json(const DatasetSnapshot& snapshot) {
  return {{"loaded_at", snapshot.loaded_at}, {"errors", snapshot.errors}};
}

// The pair named by compiler/library, or the newest; null only when the dataset is empty.
const PairRows* resolve_pair(const DatasetSnapshot& snapshot, const std::string& compiler, const std::string& library) {
  if (const PairRows* pair = snapshot.find_pair(compiler, library)) return pair;
  if (compiler.empty() && library.empty()) return nullptr;
  std::vector<std::string> present;
  for (const PairRows& pair : snapshot.pairs) present.push_back(pair.pair.compiler + " / " + pair.pair.library);
  throw HttpError(400, "parameters 'compiler'/'library': no dataset file for '" + compiler + "' / '" + library +
                           "'; present: " + (present.empty() ? "none" : join(present)));
}

// The pair a diff parameter names as COMPILER__LIBRARY: 400 when malformed, 404 when absent.
const PairRows& diff_pair(const DatasetSnapshot& snapshot, const ParamReader& reader, const std::string& name) {
  const std::string text = reader.text(name);
  if (text.empty()) throw HttpError(400, "parameter '" + name + "' is required: COMPILER__LIBRARY, see /api/pairs");
  VersionPair pair;
  try {
    pair = parse_version_pair(text, "parameter '" + name + "'");
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
  if (const PairRows* rows = snapshot.find_pair(pair.compiler, pair.library)) return *rows;
  std::vector<std::string> present;
  for (const PairRows& rows : snapshot.pairs) present.push_back(rows.pair.compiler + "__" + rows.pair.library);
  throw HttpError(404, "parameter '" + name + "': no version pair " + text + "; present: " +
                           (present.empty() ? "none" : join(present)));
}

// A ratio parameter: a number of at least 1, `fallback` when absent.
double ratio(const ParamReader& reader, const std::string& name, double fallback) {
  const std::string text = reader.text(name);
  if (text.empty()) return fallback;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !(value >= 1) || !std::isfinite(value))
    throw HttpError(400, "parameter '" + name + "': '" + cut_utf8(text, 40) + "' is not a number of at least 1");
  return value;
}

Json signal_json(const PopularitySignal& signal) {
  return {{"rank", or_null(signal.rank)},   {"count", or_null(signal.count)}, {"as_of", or_null(signal.as_of)},
          {"source", or_null(signal.source)}, {"note", or_null(signal.note)}};
}

Json catalog_json(const CatalogEntry& entry) {
  return {{"id", entry.id},
          {"task", entry.task},
          {"model_type", entry.model_type},
          {"params_b", or_null(entry.params_b)},
          {"license", or_null(entry.license)},
          {"downloads", signal_json(entry.downloads)},
          {"trending", signal_json(entry.trending)},
          {"selected", entry.selected},
          {"exclusion", or_null(exclusion_reason(entry))}};
}

Json item_json(const DatasetSnapshot& snapshot, ListItem item, const PairRows* pair) {
  if (!item.entry) item.entry = snapshot.catalog_entry(*item.model_id);
  Json json = {{"model_id", *item.model_id}, {"rank", or_null(item.rank)}, {"in_catalog", item.entry != nullptr}};
  // What the planner gives from the catalog's config, checked or not.
  const CorePlan* plan = snapshot.catalog_plan(*item.model_id);
  json["planned_cores"] = plan && plan->fits() ? Json(plan->cores) : Json(nullptr);
  json["plan"] = plan ? Json{{"profile", kCatalogPlanProfile}, {"reason", or_null(plan->reason)}, {"detail", plan->detail}}
                      : Json(nullptr);
  if (!item.row) {
    json.update({{"result", nullptr},
                 {"yours", false},
                 {"reason_code", nullptr},
                 {"license", item.entry ? or_null(item.entry->license) : Json(nullptr)},
                 {"reason", untested_reason(item, pair)},
                 {"cores", nullptr},
                 {"wall_time_s", nullptr},
                 {"compile_time_s", nullptr},
                 {"peak_device_memory_bytes", nullptr},
                 {"peak_host_memory_bytes", nullptr},
                 {"weights", nullptr},
                 {"verification", nullptr},
                 {"graph_breaks", nullptr},
                 {"eager_fallback", nullptr},
                 {"min_cosine", nullptr},
                 {"max_score_difference", nullptr},
                 {"sentences_per_s", nullptr},
                 {"quantization", nullptr},
                 {"architecture", item.entry && !item.entry->model_type.empty() ? Json(item.entry->model_type)
                                                                               : Json(nullptr)}});
    return json;
  }
  const ResultRow& row = *item.row;
  json.update({{"result", row.result},
               {"yours", pair != nullptr && pair->yours.contains(row.model_id)},
               {"reason_code", or_null(row.reason_code)},
               {"license", or_null(row.license)},
               {"reason", row.error_message ? Json(cut_utf8(*row.error_message, kReasonLength)) : Json(nullptr)},
               {"cores", or_null(row.cores)},
               {"wall_time_s", or_null(row.wall_time_s)},
               {"compile_time_s", or_null(row.compile_time_s)},
               {"peak_device_memory_bytes", or_null(row.peak_device_memory_bytes)},
               {"peak_host_memory_bytes", or_null(row.peak_host_memory_bytes)},
               {"weights", or_null(row.weights)},
               {"verification", or_null(row.verification)},
               {"graph_breaks", or_null(row.graph_breaks)},
               {"eager_fallback", or_null(row.eager_fallback)},
               {"min_cosine", or_null(row.min_cosine)},
               {"max_score_difference", or_null(row.max_score_difference)},
               {"sentences_per_s", or_null(row.sentences_per_s)},
               {"quantization", or_null(row.quantization)},
               {"architecture", row.architecture}});
  return json;
}

// "torch-2.5.1" -> "torch==2.5.1": the name ends at the last '-' before a digit.
std::string requirement(const std::string& part) {
  for (size_t i = part.size(); i-- > 1;)
    if (part[i - 1] == '-' && std::isdigit(static_cast<unsigned char>(part[i])))
      return part.substr(0, i - 1) + "==" + part.substr(i);
  return part;
}

bool is_canrun(const VersionPair& pair) { return pair.compiler.starts_with("canrun-"); }

}  // namespace

Json extra_packages(const VersionPair& pair) {
  if (is_canrun(pair))
    return {{"packages", Json::array()},
            {"note", "none beyond canrun: the built-in engine needs only what scripts/install_deps.sh installs "
                     "(Debian packages and requirements.txt)"}};
  return {{"packages", {requirement(pair.compiler), requirement(pair.library)}},
          {"note", "the external runner's stack as the version pair names it (pip install)"}};
}

Json plan_cache(const VersionPair& pair) {
  if (!is_canrun(pair))
    return {{"command", nullptr},
            {"available", false},
            {"note", "the plan cache is canrun's own; rows of " + pair.compiler + " do not use it"}};
  return {{"command", "canrun cache pull SOURCE"},
          {"available", true},
          {"note", "run with " + pair.compiler +
                       ": copies that compiler version's plans from SOURCE (a folder or an HTTP(S) server that "
                       "`canrun cache push` filled) into the plan cache, so a check of the same model content (config.json's "
                       "bytes and the XXH3-128 of each weight file, wherever the folder lies and whatever its "
                       "files' times) and shapes on the same ISA loads its plan instead of compiling. "
                       "`canrun cache push DEST` fills a folder or server from your own cache."}};
}

Json api_rows(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ListQuery query = parse_list_query(params);
  const PairRows* pair = resolve_pair(snapshot, query.compiler, query.library);
  const std::vector<ListItem> items = list_view(snapshot, pair, query);
  Json rows = Json::array();
  const size_t first = std::min<size_t>(query.offset, items.size());
  const size_t last = std::min<size_t>(first + query.limit, items.size());
  for (size_t i = first; i < last; ++i) rows.push_back(item_json(snapshot, items[i], pair));
  return {{"view", view_names()[static_cast<size_t>(query.view)]},
          {"task", query.task},
          {"pair", pair_json(pair)},
          {"ranking", ranking_json(snapshot, query)},
          {"total", items.size()},
          {"offset", query.offset},
          {"limit", query.limit},
          {"rows", std::move(rows)},
          {"dataset", dataset_json(snapshot)}};
}

Json api_model(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ParamReader reader(params, "/api/model", {"id", "compiler", "library"});
  const std::string id = reader.text("id");
  if (id.empty()) throw HttpError(400, "parameter 'id' is required: the model id, e.g. Qwen/Qwen3-0.6B");
  const PairRows* pair = resolve_pair(snapshot, reader.text("compiler"), reader.text("library"));
  const CatalogEntry* entry = snapshot.catalog_entry(id);
  const ResultRow* row = pair ? pair->row_of(id) : nullptr;
  Json training = Json::array();
  if (pair)
    for (const size_t index : pair->training)
      if (pair->rows[index].model_id == id) training.push_back(row_to_json(pair->rows[index]));
  if (!row && !entry && training.empty())
    throw HttpError(404, "model '" + id + "' has no row in " + (pair ? pair->file_name : "the dataset") +
                             " and is not in the catalog");
  Json tested_in = Json::array();
  for (const PairRows& other : snapshot.pairs)
    if (other.row_of(id)) tested_in.push_back({{"compiler", other.pair.compiler}, {"library", other.pair.library}});
  const ListItem item{&id, row, entry, {}, 0};
  const VersionPair versions = pair ? pair->pair : VersionPair{std::string("canrun-") + kVersion, ""};
  return {{"model_id", id},
          {"pair", pair_json(pair)},
          {"row", row ? row_to_json(*row) : Json(nullptr)},
          {"yours", row != nullptr && pair->yours.contains(id)},
          {"untested_reason", or_null(untested_reason(item, pair))},
          {"catalog", entry ? catalog_json(*entry) : Json(nullptr)},
          {"tested_in", std::move(tested_in)},
          {"training", std::move(training)},
          {"extra_packages", extra_packages(versions)},
          {"plan_cache", plan_cache(versions)}};
}

Json api_training(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ParamReader reader(params, "/api/training", {"task", "compiler", "library"});
  const std::string task = reader.text("task");
  const std::string compiler = reader.text("compiler");
  const std::string library = reader.text("library");
  Json rows = Json::array();
  for (const PairRows& pair : snapshot.pairs) {
    if ((!compiler.empty() && pair.pair.compiler != compiler) || (!library.empty() && pair.pair.library != library))
      continue;
    for (const size_t index : pair.training) {
      const ResultRow& row = pair.rows[index];
      if (!task.empty() && row.task != task) continue;
      Json json = row_to_json(row);
      json["pair"] = pair_json(&pair);
      json["yours"] = pair.yours.contains(row.model_id);
      rows.push_back(std::move(json));
    }
  }
  return {{"task", task}, {"rows", std::move(rows)}, {"dataset", dataset_json(snapshot)}};
}

Json api_pairs(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ParamReader reader(params, "/api/pairs", {});
  Json pairs = Json::array();
  for (const PairRows& pair : snapshot.pairs) {
    Json json = pair_json(&pair);
    json["rows"] = pair.rows.size();
    const auto newest = std::find_if(pair.rows.begin(), pair.rows.end(),
                                     [&](const ResultRow& row) { return row.timestamp == pair.newest; });
    json["newest"] = newest == pair.rows.end() ? Json(nullptr) : row_to_json(*newest)["timestamp"];
    pairs.push_back(std::move(json));
  }
  return {{"pairs", std::move(pairs)},
          {"default", snapshot.pairs.empty() ? Json(nullptr) : pair_json(&snapshot.pairs.front())},
          {"tasks", catalog_tasks()},
          {"views", view_names()},
          {"dataset", dataset_json(snapshot)}};
}

Json api_diff(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ParamReader reader(params, "/api/diff", {"from", "to", "time_ratio", "memory_ratio", "all"});
  const PairRows& from = diff_pair(snapshot, reader, "from");
  const PairRows& to = diff_pair(snapshot, reader, "to");
  DiffOptions options;
  options.time_ratio = ratio(reader, "time_ratio", options.time_ratio);
  options.memory_ratio = ratio(reader, "memory_ratio", options.memory_ratio);
  const bool all = reader.choice("all", {"0", "1"}, "0") == "1";
  const std::vector<ModelDiff> diff = diff_rows(from.rows, to.rows, options);
  const DiffCounts counts = count_changes(diff);
  Json models = Json::array();
  for (const ModelDiff& model : diff)
    if (all || !model.changes.empty()) models.push_back(model_diff_json(model));
  return {{"from", pair_json(&from)},
          {"to", pair_json(&to)},
          {"time_ratio", options.time_ratio},
          {"memory_ratio", options.memory_ratio},
          {"counts",
           {{"models", counts.models},
            {"changed", counts.changed},
            {"regressions", counts.regressions},
            {"tokens_compared", counts.tokens_compared},
            {"tokens_agree", counts.tokens_agree}}},
          {"models", std::move(models)},
          {"dataset", dataset_json(snapshot)}};
}

Json api_catalog(const DatasetSnapshot& snapshot, const QueryParams& params) {
  const ParamReader reader(params, "/api/catalog", {"task"});
  const std::string task = reader.text("task");
  if (!task.empty()) reader.choice("task", catalog_tasks(), "");
  Json models = Json::array();
  for (const CatalogEntry& entry : snapshot.catalog)
    if (task.empty() || entry.task == task) models.push_back(catalog_json(entry));
  return {{"models", std::move(models)}, {"dataset", dataset_json(snapshot)}};
}

}  // namespace canrun
