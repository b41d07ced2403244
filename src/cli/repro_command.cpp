// canrun repro MODEL: prints the script stored in MODEL's row, which reproduces that row.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "lab/query.h"
#include "lab/results_dir.h"

namespace canrun {
namespace {

struct ReproArgs {
  std::string model;
  std::string data_dir;  // empty: dataset_folders' default
  QueryFilter filter;
};

void run(const ReproArgs& args) {
  const std::vector<DatasetFolder> folders = dataset_folders(args.data_dir);
  const QueryResult result = query_results(folders, args.filter);
  std::vector<const ResultRow*> matching;
  for (const ResultRow& row : result.rows)
    if (row.model_id == args.model) matching.push_back(&row);
  if (matching.empty())
    fail(ErrorKind::kUsage, "no row for model '" + args.model + "' (workload " + args.filter.workload + ") in " +
                                result.files.file_name() + " of " + folders_text(folders));
  if (matching.size() > 1) {
    std::string setups;
    for (const ResultRow* row : matching) setups += "\n  " + workload_setup(*row);
    fail(ErrorKind::kUsage, std::to_string(matching.size()) + " rows for model '" + args.model + "' in " +
                                result.files.file_name() + ": --dtype picks one of" + setups);
  }
  std::cout << matching.front()->reproduce_script;
}

}  // namespace

void add_repro_command(CLI::App& app) {
  auto args = std::make_shared<ReproArgs>();
  CLI::App* command = app.add_subcommand("repro", "Print the script that reproduces a model's row of the dataset");
  command->add_option("model", args->model, "The row's model_id, exactly")->required();
  command->add_option("--data", args->data_dir,
                      "Dataset folder (default: the dataset canrun ships, " + shipped_dataset_dir() +
                          ", and your own results in " + user_results_dir() + "/)");
  command->add_option("--compiler", args->filter.compiler, "Version pair: compiler version (default: newest pair)");
  command->add_option("--library", args->filter.library, "Version pair: library version");
  args->filter.workload = "inference";
  command->add_option("--workload", args->filter.workload,
                      "The generation check's row (inference, the default) or a training check's (train)")
      ->check(CLI::IsMember({"inference", "train"}));
  command->add_option("--dtype", args->filter.dtype, "A training check's compute dtype, where a model has several")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  command->callback([args] { run(*args); });
}

}  // namespace canrun
