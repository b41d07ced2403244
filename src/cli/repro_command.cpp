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
  for (const ResultRow& row : result.rows)
    if (row.model_id == args.model) {
      std::cout << row.reproduce_script;
      return;
    }
  fail(ErrorKind::kUsage, "no row for model '" + args.model + "' in " + result.files.file_name() + " of " + folders_text(folders));
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
  command->callback([args] { run(*args); });
}

}  // namespace canrun
