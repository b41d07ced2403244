// canrun cache: the on-disk plan cache. ls lists its entries, rm removes some, prune removes
// what is stale, pull and push share entries with a team through a folder or HTTP(S).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "plan/plan_cache.h"
#include "plan/plan_manifest.h"
#include "plan/plan_transfer.h"

namespace canrun {
namespace {

struct CacheArgs {
  std::string cache_dir;
  bool all_versions = false;
  bool json = false;
  bool verify = false;
  std::vector<std::string> prefixes;
  bool all = false;
  double older_than_days = 0;
  double max_size_mib = 0;
  bool dry_run = false;
  std::string location;
  std::vector<std::string> headers;
};

PlanCache open_cache(const CacheArgs& args) {
  return PlanCache(args.cache_dir.empty() ? PlanCache::default_root() : std::filesystem::path(args.cache_dir));
}

std::string size_text(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

// A manifest field for display; empty when the manifest could not be read.
std::string field(const PlanEntryInfo& info, const char* name) {
  if (!info.manifest.is_object()) return "";
  const Json& object = info.manifest.contains("key") && info.manifest["key"].contains(name) ? info.manifest["key"]
                                                                                            : info.manifest;
  return object.contains(name) && object[name].is_string() ? object[name].get<std::string>() : "";
}

Json entry_json(const PlanEntryInfo& info) {
  return {{"digest", info.digest},
          {"compiler_version", info.compiler_version},
          {"dir", info.dir.string()},
          {"key", info.manifest.is_object() && info.manifest.contains("key") ? info.manifest["key"] : Json()},
          {"label", field(info, "label")},
          {"created", field(info, "created")},
          {"last_used", format_utc(info.last_used)},
          {"bytes", info.bytes},
          {"files", info.manifest.is_object() && info.manifest.contains("files") ? info.manifest["files"] : Json()},
          {"ok", info.problem.empty()},
          {"problem", info.problem}};
}

void run_ls(const CacheArgs& args) {
  const PlanCache cache = open_cache(args);
  const std::vector<PlanEntryInfo> entries = cache.list(args.all_versions, args.verify);
  uint64_t total = 0;
  size_t corrupt = 0;
  for (const PlanEntryInfo& info : entries) {
    total += info.bytes;
    corrupt += info.problem.empty() ? 0 : 1;
  }
  if (args.json) {
    Json list = Json::array();
    for (const PlanEntryInfo& info : entries) list.push_back(entry_json(info));
    std::cout << Json({{"root", cache.root().string()},
                       {"compiler_version", cache.compiler_version()},
                       {"entries", list},
                       {"total_bytes", total}})
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "plan cache " << cache.root().string() << " (compiler version " << cache.compiler_version() << ")\n";
  if (!entries.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"DIGEST", "KIND", "LABEL", "SHAPES", "SHARD", "SIZE", "CREATED", "LAST USED", "VERSION", "STATUS"}};
    for (const PlanEntryInfo& info : entries)
      rows.push_back({info.digest.substr(0, 12), field(info, "kind"), field(info, "label"), field(info, "shapes"),
                      field(info, "shard"), size_text(info.bytes), field(info, "created"),
                      format_utc(info.last_used), info.compiler_version, info.problem.empty() ? "ok" : "corrupt"});
    print_aligned_table(rows);
    for (const PlanEntryInfo& info : entries)
      if (!info.problem.empty()) std::cout << "corrupt " << info.digest << ": " << info.problem << "\n";
  }
  std::cout << entries.size() << " entries, " << size_text(total);
  if (corrupt > 0) std::cout << ", " << corrupt << " corrupt (`canrun cache prune` removes them)";
  std::cout << (args.verify ? " (checksums verified)" : " (file sizes checked; --verify checks checksums)") << "\n";
}

void run_rm(const CacheArgs& args) {
  if (args.all == !args.prefixes.empty())
    fail(ErrorKind::kUsage, "cache rm: give digest prefixes (see `canrun cache ls`) or --all, not both");
  const PlanCache cache = open_cache(args);
  const std::vector<PlanEntryInfo> entries = cache.list(true, false);
  std::vector<const PlanEntryInfo*> chosen;
  if (args.all) {
    for (const PlanEntryInfo& info : entries) chosen.push_back(&info);
  }
  // Every prefix is resolved before anything is removed.
  for (const std::string& prefix : args.prefixes) {
    std::vector<const PlanEntryInfo*> matches;
    for (const PlanEntryInfo& info : entries)
      if (info.digest.rfind(prefix, 0) == 0) matches.push_back(&info);
    if (matches.empty())
      fail(ErrorKind::kUsage, "cache rm: no entry's digest starts with \"" + prefix + "\" in " + cache.root().string());
    if (matches.size() > 1)
      fail(ErrorKind::kUsage, "cache rm: \"" + prefix + "\" is ambiguous: " + std::to_string(matches.size()) +
                                  " entries' digests start with it; give more characters");
    if (std::find(chosen.begin(), chosen.end(), matches[0]) == chosen.end()) chosen.push_back(matches[0]);
  }
  uint64_t freed = 0;
  for (const PlanEntryInfo* info : chosen) {
    freed += cache.remove(*info);
    std::cout << "removed " << info->digest << " (" << field(*info, "kind") << " " << field(*info, "label") << ", "
              << size_text(info->bytes) << ")\n";
  }
  std::cout << chosen.size() << " entries removed, " << size_text(freed) << " freed\n";
}

void run_prune(const CacheArgs& args, const CLI::App& command) {
  PruneOptions options;
  if (command.count("--older-than") > 0) options.older_than_days = args.older_than_days;
  if (command.count("--max-size-mib") > 0)
    options.max_bytes = static_cast<uint64_t>(args.max_size_mib * 1024.0 * 1024.0);
  options.dry_run = args.dry_run;
  const PlanCache cache = open_cache(args);
  const PruneReport report = cache.prune(options);
  for (const PrunedItem& item : report.removed)
    std::cout << (args.dry_run ? "would remove " : "removed ") << item.path.string() << ": " << item.reason << " ("
              << size_text(item.bytes) << ")\n";
  std::cout << report.removed.size() << (args.dry_run ? " would be removed, " : " removed, ")
            << size_text(report.bytes_freed) << (args.dry_run ? " would be freed" : " freed") << "\n";
}

void run_transfer(const CacheArgs& args, bool pull) {
  const PlanCache cache = open_cache(args);
  TransferOptions options;
  options.headers = args.headers;
  const TransferReport report =
      pull ? pull_plans(cache, args.location, options) : push_plans(cache, args.location, options);
  std::cout << (pull ? "pulled " : "pushed ") << report.copied << " entries (" << size_text(report.bytes) << ") "
            << (pull ? "from " : "to ") << args.location << "; " << report.present << " already "
            << (pull ? "in " + cache.root().string() : std::string("there")) << " (compiler version "
            << cache.compiler_version() << ")\n";
}

// A number >= 0; CLI11's own check prints the whole double range when the text is no number.
CLI::Validator non_negative(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        return !text.empty() && *end == '\0' && value >= 0 ? std::string()
                                                           : "\"" + text + "\" is not " + what + " (a number, 0 or more)";
      },
      "NUMBER", "non-negative");
}

void add_cache_dir(CLI::App* command, CacheArgs& args) {
  command->add_option("--cache-dir", args.cache_dir,
                      "Plan cache folder (default $CANRUN_CACHE_DIR, else $XDG_CACHE_HOME/canrun/plans, else "
                      "~/.cache/canrun/plans)");
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cache = app.add_subcommand(
      "cache",
      "Manage the plan cache: compiled plans (packed weights, graph and buffer plans for fixed shapes) kept on disk "
      "under <cache-dir>/<compiler version>/<digest>/ so a later run skips compilation");
  cache->require_subcommand(1);

  CLI::App* ls = cache->add_subcommand("ls", "List the entries of this compiler version: digest, kind, label, "
                                             "shapes, shard, size, created, last used; then the totals");
  add_cache_dir(ls, *args);
  ls->add_flag("--all-versions", args->all_versions, "Also list entries of other compiler versions");
  ls->add_flag("--verify", args->verify, "Verify every file's checksum, not only its size");
  ls->add_flag("--json", args->json, "Print JSON");
  ls->callback([args] { run_ls(*args); });

  CLI::App* rm = cache->add_subcommand("rm", "Remove the entries whose digests start with the given prefixes");
  add_cache_dir(rm, *args);
  rm->add_option("DIGEST_PREFIX", args->prefixes, "Digest prefixes, as `canrun cache ls` shows them")
      ->check(CLI::Validator(
          [](std::string& text) {
            return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string::npos
                       ? std::string()
                       : "\"" + text + "\" is not a digest prefix (lowercase hex characters)";
          },
          "HEX", "digest prefix"));
  rm->add_flag("--all", args->all, "Remove every entry, of every compiler version");
  rm->callback([args] { run_rm(*args); });

  CLI::App* prune = cache->add_subcommand(
      "prune",
      "Remove entries of other compiler versions, corrupt entries and abandoned temporary folders (older than ten "
      "minutes); then entries unused for --older-than days, then the least recently used beyond --max-size-mib");
  add_cache_dir(prune, *args);
  prune->add_option("--older-than", args->older_than_days, "Remove entries unused for more than DAYS days")
      ->check(non_negative("a number of days"));
  prune->add_option("--max-size-mib", args->max_size_mib, "Then keep the cache under N MiB")
      ->check(non_negative("a size in MiB"));
  prune->add_flag("--dry-run", args->dry_run, "Say what would be removed, remove nothing");
  prune->callback([args, prune] { run_prune(*args, *prune); });

  const char* layout = " (layout: <base>/<compiler version>/index.json and <base>/<compiler version>/<digest>/<file>)";
  CLI::App* pull = cache->add_subcommand(
      "pull", std::string("Copy into the cache the entries of this compiler version that SOURCE has and the cache "
                          "lacks, each verified against its manifest") + layout);
  add_cache_dir(pull, *args);
  pull->add_option("SOURCE", args->location, "A folder, or an http:// or https:// URL")->required();
  CLI::App* push = cache->add_subcommand(
      "push", std::string("Copy the cache's verified entries of this compiler version that DEST lacks, files "
                          "first, then DEST's index") + layout);
  add_cache_dir(push, *args);
  push->add_option("DEST", args->location, "A folder, or an http:// or https:// URL (written with PUT)")->required();
  for (CLI::App* command : {pull, push})
    command->add_option("--header", args->headers, "HTTP header sent with every request, \"Name: value\" (repeatable)")
        ->allow_extra_args(false);
  pull->callback([args] { run_transfer(*args, true); });
  push->callback([args] { run_transfer(*args, false); });
}

}  // namespace canrun
