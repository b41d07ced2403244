// canrun diff: what changed per model between two version pairs of a dataset folder.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "lab/results_dir.h"
#include "lab/version_diff.h"
#include "util/error.h"

namespace canrun {
namespace {

struct DiffArgs {
  std::string data_dir;  // empty: dataset_folders' default
  std::string from, to;
  DiffOptions options;
  bool all = false;
  bool fail_on_regression = false;
  std::string format = "table";
};

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

// The error a reader wants beside a change: the newer row's, else the older's.
std::string error_of(const ModelDiff& model) {
  for (const std::optional<ResultRow>& row : {model.to, model.from})
    if (row && row->error_message) return *row->error_message;
  return "";
}

void run(const DiffArgs& args) {
  const VersionDiff diff = diff_versions(dataset_folders(args.data_dir), parse_version_pair(args.from, "--from"),
                                         parse_version_pair(args.to, "--to"), args.options);
  const DiffCounts counts = count_changes(diff.models);
  const int regressions = counts.regressions;
  if (args.format == "json") {
    Json models = Json::array();
    for (const ModelDiff& model : diff.models)
      if (args.all || !model.changes.empty()) models.push_back(model_diff_json(model));
    std::cout << Json{{"from", diff.from.where()}, {"to", diff.to.where()}, {"models", models}}.dump(
                     2, ' ', false, Json::error_handler_t::replace)
              << "\n";
  } else {
    std::vector<std::vector<std::string>> cells = {{"MODEL", "TASK", "FROM", "TO", "CHANGES", "ERROR"}};
    for (const ModelDiff& model : diff.models) {
      if (!args.all && model.changes.empty()) continue;
      cells.push_back({model.model_id, model.task, model.from ? model.from->result : "-",
                       model.to ? model.to->result : "-", model.changes.empty() ? "unchanged" : joined(model.changes),
                       error_of(model).substr(0, 60)});
    }
    print_aligned_table(cells);
    std::cout << counts.models << " models in " << diff.from.where() << " or " << diff.to.where() << ": "
              << counts.changed << " changed, " << regressions << (regressions == 1 ? " regression" : " regressions")
              << "; generated tokens agree on " << counts.tokens_agree << " of " << counts.tokens_compared
              << " compared\n";
  }
  if (args.fail_on_regression && regressions > 0)
    fail(ErrorKind::kRuntime, std::to_string(regressions) + " regression" + (regressions == 1 ? "" : "s") +
                                  " from " + args.from + " to " + args.to + " (--fail-on-regression)");
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* command = app.add_subcommand(
      "diff",
      "Compare two version pairs of the lab's dataset per model: newly failing, newly passing, cores changed, wall "
      "time or peak memory changed beyond a ratio (between runs that both passed), and whether the generated tokens "
      "agree. Only changed models are listed unless --all.");
  command->add_option("--data", args->data_dir,
                      "Dataset folder (default: the dataset canrun ships, " + shipped_dataset_dir() +
                          ", and your own results in " + user_results_dir() + "/)");
  command->add_option("--from", args->from, "The older pair, COMPILER__LIBRARY as its file is named")->required();
  command->add_option("--to", args->to, "The newer pair, COMPILER__LIBRARY")->required();
  command->add_option("--time-ratio", args->options.time_ratio,
                      "Wall time changed when one run took at least this many times the other's (default 1.5)");
  command->add_option("--memory-ratio", args->options.memory_ratio,
                      "Peak host memory changed at this ratio (default 1.2)");
  command->add_flag("--all", args->all, "List unchanged models too");
  command->add_flag("--fail-on-regression", args->fail_on_regression,
                    "Exit 1 when a model newly fails, or got slower or heavier beyond the ratios");
  command->add_option("--format", args->format, "table (default) or json")->check(CLI::IsMember({"table", "json"}));
  command->callback([args] { run(*args); });
}

}  // namespace canrun
