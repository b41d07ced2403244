// canrun catalog: lists the lab's model catalog, filtered, with the cores each model needs
// on a device profile and why a model is not tested.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/table.h"
#include "lab/catalog.h"
#include "lab/catalog_plan.h"
#include "lab/device_profile.h"
#include "util/json.h"

namespace canrun {
namespace {

struct CatalogArgs {
  std::string catalog;
  CatalogFilter filter;
  std::string profile = kCatalogPlanProfile;
  std::string profiles_file;
  bool json = false;
};

Json or_null(const std::optional<int64_t>& value) { return value ? Json(*value) : Json(nullptr); }
Json or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json signal_json(const PopularitySignal& signal) {
  Json json = {{"rank", or_null(signal.rank)}, {"as_of", or_null(signal.as_of)}, {"source", or_null(signal.source)}};
  if (signal.count) json["count"] = *signal.count;
  if (!signal.note.empty()) json["note"] = signal.note;
  return json;
}

Json plan_json(const PlannedEntry& planned, const DeviceProfile& profile) {
  if (!planned.plan) return {{"profile", profile.name}, {"error", planned.plan_error}};
  const CorePlan& plan = *planned.plan;
  return {{"profile", profile.name},
          {"cores", plan.fits() ? Json(plan.cores) : Json(nullptr)},
          {"tp_degree", plan.fits() ? Json(plan.tp_degree) : Json(nullptr)},
          {"ep_degree", plan.fits() ? Json(plan.ep_degree) : Json(nullptr)},
          {"reason", or_null(plan.reason)},
          {"detail", plan.detail},
          {"parameters", planned.shape.parameters},
          {"estimate_from", planned.shape.source},
          {"per_core_bytes", plan.per_core_bytes},
          {"weight_bytes", plan.estimate.weight_bytes},
          {"kv_cache_bytes", plan.estimate.kv_cache_bytes},
          {"activation_bytes", plan.estimate.activation_bytes},
          {"overhead_bytes", plan.estimate.overhead_bytes}};
}

Json entry_json(const PlannedEntry& planned, const DeviceProfile& profile) {
  const CatalogEntry& entry = planned.entry;
  return {{"id", entry.id},
          {"task", entry.task},
          {"model_type", entry.model_type.empty() ? Json(nullptr) : Json(entry.model_type)},
          {"family_supported", family_supported(entry)},
          {"params_b", entry.params_b ? Json(*entry.params_b) : Json(nullptr)},
          {"license", or_null(entry.license)},
          {"downloads", signal_json(entry.downloads)},
          {"trending", signal_json(entry.trending)},
          {"selected", entry.selected},
          {"exclusion", or_null(exclusion_reason(entry))},
          {"plan", plan_json(planned, profile)},
          {"config", entry.config}};
}

std::string params_text(const std::optional<double>& params_b) {
  if (!params_b) return "?";
  char text[32];
  std::snprintf(text, sizeof(text), *params_b < 1 ? "%.2fB" : *params_b < 100 ? "%.1fB" : "%.0fB", *params_b);
  return text;
}

std::string status_text(const CatalogEntry& entry) {
  const std::string reason = exclusion_reason(entry);
  if (!entry.selected) return reason;
  return reason.empty() ? "selected" : "selected; " + reason;
}

void print_table(const std::vector<PlannedEntry>& rows, const DeviceProfile& profile) {
  std::vector<std::vector<std::string>> cells = {
      {"MODEL", "TASK", "ARCH", "PARAMS", "DL RANK", "CORES@" + profile.name, "SELECTED / EXCLUSION"}};
  for (const PlannedEntry& row : rows) {
    const CatalogEntry& entry = row.entry;
    const std::string cores = !row.plan ? "?" : row.plan->fits() ? std::to_string(row.plan->cores) : "-";
    cells.push_back({entry.id, entry.task, entry.model_type.empty() ? "?" : entry.model_type, params_text(entry.params_b),
                     entry.downloads.rank ? "#" + std::to_string(*entry.downloads.rank) : "-", cores,
                     status_text(entry)});
  }
  print_aligned_table(cells);
  const auto selected = std::count_if(rows.begin(), rows.end(), [](const PlannedEntry& r) { return r.entry.selected; });
  std::cout << rows.size() << " models, " << selected << " selected. DL RANK: downloads rank within the task"
            << " (trending ranks are not in the snapshot; see --json). CORES: fewest cores of " << profile.name
            << " that hold the model (- none, ? no estimate).\n";
}

void run_catalog(const CatalogArgs& args) {
  const std::vector<DeviceProfile> profiles = available_profiles(args.profiles_file);
  const DeviceProfile& profile = find_profile(profiles, args.profile);
  const std::string path = args.catalog.empty() ? default_catalog_path() : args.catalog;
  std::vector<PlannedEntry> rows;
  for (const CatalogEntry& entry : filter_catalog(load_catalog(path), args.filter))
    rows.push_back(plan_entry(entry, profile));
  if (args.json) {
    Json out = Json::array();
    for (const PlannedEntry& row : rows) out.push_back(entry_json(row, profile));
    std::cout << out.dump(2) << "\n";
    return;
  }
  print_table(rows, profile);
}

}  // namespace

void add_catalog_command(CLI::App& app) {
  auto args = std::make_shared<CatalogArgs>();
  CLI::App* command = app.add_subcommand("catalog", "List the lab's catalog of popular Hub models");
  command->add_option("--task", args->filter.task, "Only this task")
      ->check(CLI::IsMember(catalog_tasks()));
  command->add_flag("--selected", args->filter.selected_only, "Only the models the sweep tests");
  command->add_option("--search", args->filter.search, "Only ids containing this text (any case)");
  command->add_option("--arch", args->filter.model_type, "Only this model_type");
  command->add_option("--profile", args->profile, "Device profile for the CORES column (default trn2)");
  command->add_option("--profiles", args->profiles_file, "JSON file of extra device profiles")
      ->check(regular_file_check());
  command->add_option("--catalog", args->catalog, "Catalog file (default $CANRUN_CATALOG or data/catalog.jsonl)")
      ->check(regular_file_check());
  command->add_flag("--json", args->json, "Print the entries, with config values and plan, as JSON");
  command->callback([args] { run_catalog(*args); });
}

}  // namespace canrun
