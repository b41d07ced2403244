// canrun archs: the supported architecture families, the config options each handles, and
// how many of the catalog's text-generation models that fit 16 cores of 24 GiB (trn2, bf16)
// each covers, and what share of the task's downloads the supported families carry; then the
// families still missing, with the models they block; and for the encoder tasks (sentence-similarity,
// feature-extraction, text-ranking, text-classification), how many of their models with a known
// model_type have a family canrun runs as an encoder, by count and by downloads.
#include <algorithm>
#include <iostream>
#include <cstdio>
#include <map>
#include <memory>

#include "checkpoint/config_reader.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/table.h"
#include "lab/catalog.h"
#include "lab/device_profile.h"
#include "lab/planner.h"
#include "models/registry.h"
#include "util/json.h"

namespace canrun {
namespace {

struct ArchsArgs {
  std::string catalog;
  std::string task = "text-generation";
  std::string profile = "trn2";
  bool json = false;
};

struct Coverage {
  std::vector<std::string> models;         // catalog models of the family that fit
  std::vector<std::string> config_errors;  // of those, the ones whose config the family rejects
  int64_t downloads = 0;                   // of all the family's catalog models, fitting or not
};

// Whether the model's bf16 weights fit the profile: from the family's spec when canrun reads
// the config, else from the generic estimate.
bool fits(const CatalogEntry& entry, const DeviceProfile& profile, std::string& config_error) {
  const Json config = hf_config(entry);
  ModelShape shape;
  try {
    shape = model_shape(config, published_parameters(entry));
  } catch (const Error& e) {
    config_error = e.what();
    try {
      shape = shape_from_config(config, published_parameters(entry));
    } catch (const Error&) {
      return false;
    }
  }
  try {
    return plan_cores(shape, profile, PlannerOptions{}).fits();
  } catch (const Error&) {
    return false;
  }
}

// One encoder task's models (or all of them, task "encoder tasks"): those with a known
// model_type, those of a family canrun runs as an encoder, and their downloads.
struct TaskCoverage {
  std::string task;
  int64_t records = 0, known = 0, supported = 0;
  int64_t known_downloads = 0, supported_downloads = 0;
};

std::vector<TaskCoverage> encoder_coverage(const std::vector<CatalogEntry>& entries) {
  std::vector<TaskCoverage> result;
  for (const std::string& task : encoder_tasks()) result.push_back({task});
  result.push_back({"encoder tasks"});
  for (const CatalogEntry& entry : entries) {
    if (!is_encoder_task(entry.task)) continue;
    const bool supported = family_supported(entry);
    const int64_t downloads = entry.downloads.count.value_or(0);
    for (TaskCoverage& coverage : result) {
      if (coverage.task != entry.task && coverage.task != "encoder tasks") continue;
      ++coverage.records;
      if (entry.model_type.empty()) continue;
      ++coverage.known;
      coverage.known_downloads += downloads;
      if (!supported) continue;
      ++coverage.supported;
      coverage.supported_downloads += downloads;
    }
  }
  return result;
}

double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

Json encoder_json(const std::vector<TaskCoverage>& encoders) {
  Json result = Json::array();
  for (const TaskCoverage& c : encoders)
    result.push_back({{"task", c.task},
                      {"records", c.records},
                      {"known_model_type", c.known},
                      {"supported", c.supported},
                      {"percent", share(c.supported, c.known)},
                      {"known_downloads", c.known_downloads},
                      {"supported_downloads", c.supported_downloads},
                      {"downloads_percent", share(c.supported_downloads, c.known_downloads)}});
  return result;
}

void print_encoder_coverage(const std::vector<TaskCoverage>& encoders) {
  if (encoders.empty()) return;
  std::cout << "encoder tasks: models of a family canrun runs as an encoder / models with a known model_type"
               " (fitting or not), and their share of those models' downloads:\n";
  for (const TaskCoverage& c : encoders) {
    char line[160];
    std::snprintf(line, sizeof line, "  %s: %lld / %lld (%.1f%%); by downloads %.1f%% of %lld", c.task.c_str(),
                  static_cast<long long>(c.supported), static_cast<long long>(c.known), share(c.supported, c.known),
                  share(c.supported_downloads, c.known_downloads), static_cast<long long>(c.known_downloads));
    std::cout << line;
    if (c.records != c.known) std::cout << "; " << c.records - c.known << " more with no model_type known";
    std::cout << "\n";
  }
}

void run_archs(const ArchsArgs& args) {
  const std::vector<CatalogEntry> entries =
      load_catalog(args.catalog.empty() ? default_catalog_path() : args.catalog);
  const std::vector<DeviceProfile> profiles = available_profiles("");
  const DeviceProfile& profile = find_profile(profiles, args.profile);
  const std::vector<Architecture> architectures = registered_architectures();
  std::map<std::string, Coverage> supported, missing;
  for (const Architecture& a : architectures) supported[a.model_type];
  int64_t total = 0, total_downloads = 0;
  for (const CatalogEntry& entry : entries) {
    if (!args.task.empty() && entry.task != args.task) continue;
    if (entry.model_type.empty()) continue;  // no config in the snapshot: nothing to place or count
    // A model_type canrun does not know may still name a class it implements (kimi_k2); for an
    // encoder task the family must run the config as an encoder.
    const Architecture* architecture =
        family_supported(entry) ? resolve_architecture(entry.model_type, entry.architectures) : nullptr;
    Coverage& coverage = architecture ? supported[architecture->model_type] : missing[entry.model_type];
    const int64_t downloads = entry.downloads.count.value_or(0);
    coverage.downloads += downloads;
    total_downloads += downloads;
    std::string config_error;
    if (!fits(entry, profile, config_error)) continue;
    ++total;
    coverage.models.push_back(entry.id);
    if (architecture && !config_error.empty()) coverage.config_errors.push_back(entry.id + ": " + config_error);
  }
  int64_t covered = 0, loadable = 0, covered_downloads = 0;
  for (const auto& [type, coverage] : supported) {
    covered += static_cast<int64_t>(coverage.models.size());
    loadable += static_cast<int64_t>(coverage.models.size() - coverage.config_errors.size());
    covered_downloads += coverage.downloads;
  }
  const double percent = share(covered, total), downloads_percent = share(covered_downloads, total_downloads);
  const bool show_encoders = args.task.empty() || args.task == "text-generation" || is_encoder_task(args.task);
  const std::vector<TaskCoverage> encoders = show_encoders ? encoder_coverage(entries) : std::vector<TaskCoverage>{};

  if (args.json) {
    Json families = Json::array();
    for (const Architecture& a : architectures) {
      const Coverage& coverage = supported[a.model_type];
      families.push_back({{"model_type", a.model_type},
                          {"description", a.description},
                          {"options", a.options},
                          {"classes", a.classes},
                          {"catalog_models", coverage.models.size()},
                          {"catalog_downloads", coverage.downloads},
                          {"models", coverage.models},
                          {"config_errors", coverage.config_errors}});
    }
    Json missing_json = Json::array();
    for (const auto& [type, coverage] : missing)
      missing_json.push_back({{"model_type", type}, {"catalog_models", coverage.models.size()},
                              {"catalog_downloads", coverage.downloads}, {"models", coverage.models}});
    std::cout << Json({{"task", args.task},
                       {"profile", profile.name},
                       {"supported", families},
                       {"missing", missing_json},
                       {"coverage", {{"covered", covered},
                                     {"loadable", loadable},
                                     {"total", total},
                                     {"percent", percent},
                                     {"covered_downloads", covered_downloads},
                                     {"total_downloads", total_downloads},
                                     {"downloads_percent", downloads_percent}}},
                       {"encoder_tasks", encoder_json(encoders)}})
                     .dump(2)
              << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"ARCH", "CATALOG", "DESCRIPTION", "CONFIG OPTIONS"}};
  for (const Architecture& a : architectures) {
    std::string options;
    for (const std::string& option : a.options) options += (options.empty() ? "" : ", ") + option;
    rows.push_back({a.model_type, std::to_string(supported[a.model_type].models.size()), a.description, options});
  }
  print_aligned_table(rows);
  char line[200];
  std::snprintf(line, sizeof line, "%.1f%%", percent);
  std::cout << "\ncoverage: " << covered << " / " << total << " " << args.task << " models of the catalog that fit "
            << profile.name << " in bf16 have a supported architecture (" << line << ")";
  if (loadable != covered) std::cout << "; " << loadable << " of them load with their config";
  std::snprintf(line, sizeof line, "%.1f%%", downloads_percent);
  std::cout << "\nby downloads: " << line << " of the " << total_downloads << " downloads of the catalog's "
            << args.task << " models (fitting or not) are of a supported architecture\n";
  for (const auto& [type, coverage] : supported)
    for (const std::string& error : coverage.config_errors) std::cout << "config not supported: " << error << "\n";
  print_encoder_coverage(encoders);
  if (!missing.empty()) {
    std::cout << "missing families:\n";
    std::vector<std::pair<std::string, Coverage>> ordered(missing.begin(), missing.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.second.downloads > b.second.downloads; });
    for (const auto& [type, coverage] : ordered) {
      std::string models;
      for (const std::string& id : coverage.models) models += (models.empty() ? "" : ", ") + id;
      std::cout << "  " << type << " (" << coverage.models.size() << " fit, " << coverage.downloads
                << " downloads)" << (models.empty() ? "" : ": " + models) << "\n";
    }
  }
}

}  // namespace

void add_archs_command(CLI::App& app) {
  auto args = std::make_shared<ArchsArgs>();
  CLI::App* command = app.add_subcommand(
      "archs", "List the supported architecture families, their config options and catalog coverage");
  command->add_option("--catalog", args->catalog, "Catalog JSONL (default data/catalog.jsonl or $CANRUN_CATALOG)")
      ->check(regular_file_check());
  command->add_option("--task", args->task, "Catalog task to count (default text-generation; empty: all)");
  command->add_option("--profile", args->profile, "Device profile the models must fit (default trn2)");
  command->add_flag("--json", args->json, "Print JSON");
  command->callback([args] { run_archs(*args); });
}

}  // namespace canrun
