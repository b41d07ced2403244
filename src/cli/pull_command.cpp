// canrun pull ORG/NAME[@REVISION]: a model repository from the Hub into the Hugging Face cache.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "hub/download_progress.h"
#include "hub/hub_download.h"

namespace canrun {
namespace {

struct PullArgs {
  std::string model;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  int jobs = 8;
};

void run_pull(const PullArgs& args) {
  PullOptions options;
  options.ref = parse_hub_ref(args.model);
  if (!args.include.empty()) options.include = args.include;
  options.exclude = args.exclude;
  options.jobs = args.jobs;
  const HubSettings settings = hub_settings_from_environment();
  const auto start = std::chrono::steady_clock::now();
  const PullResult result = pull_with_progress(options, settings);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t fetched = 0;
  for (const PulledFile& file : result.files) fetched += file.downloaded ? 1 : 0;
  char summary[160];
  std::snprintf(summary, sizeof(summary), "%zu files (%lld fetched, %.1f MB in %.2f s, %.1f MB/s) at commit ",
                result.files.size(), static_cast<long long>(fetched), result.bytes_downloaded / 1e6, seconds,
                seconds > 0 ? result.bytes_downloaded / 1e6 / seconds : 0.0);
  std::cerr << options.ref.repo_id << ": " << summary << result.commit
            << (settings.offline ? " (HF_HUB_OFFLINE: from the cache)" : "") << "\n";
  std::cout << result.snapshot_dir << "\n";
}

}  // namespace

void add_pull_command(CLI::App& app) {
  auto args = std::make_shared<PullArgs>();
  CLI::App* command = app.add_subcommand(
      "pull",
      "Download a model repository from the Hugging Face Hub into the Hugging Face cache, laid out as\n"
      "huggingface_hub lays it out (blobs/, snapshots/<commit>/, refs/), and print the snapshot folder.\n"
      "Resumes a partial file, checks each file's size (and its hash where the ETag is a sha256 or a git\n"
      "blob sha1), and skips what the cache holds.\n"
      "Environment: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (gated and private\n"
      "repositories; else the token file of `hf auth login`), HF_HUB_CACHE / HF_HOME (where the cache\n"
      "is), HF_HUB_OFFLINE=1 (no network: only find the snapshot in the cache).");
  command->add_option("model", args->model, "ORG/NAME, or ORG/NAME@REVISION for a branch, tag or commit")->required();
  std::string defaults;
  for (const std::string& pattern : default_hub_patterns()) defaults += (defaults.empty() ? "" : " ") + pattern;
  command->add_option("--include", args->include,
                      "Only the repository paths matching these globs (default: what canrun reads: " + defaults + ")");
  command->add_option("--exclude", args->exclude, "Not the paths matching these globs");
  command->add_option("--jobs", args->jobs, "Files downloaded at once")->capture_default_str();
  command->callback([args] { run_pull(*args); });
}

}  // namespace canrun
