// canrun dataset merge: folds the parts that sharded sweeps wrote into each pair's file.
// canrun dataset remove: takes the rows of models out of every pair's file.
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "lab/results_dir.h"
#include "util/error.h"

namespace canrun {

void add_dataset_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("dataset", "Work on a dataset folder");
  command->require_subcommand(1);
  auto dir = std::make_shared<std::string>(user_results_dir());
  CLI::App* merge = command->add_subcommand(
      "merge",
      "Fold the parts that `canrun sweep --shard K/N` wrote (<pair>/part-K-of-N.parquet) into each pair's\n"
      "file: one row per model, the newest check winning; the parts are removed and the card rewritten");
  merge->add_option("dir", *dir, "Dataset folder (default " + user_results_dir() + "/)")->check(CLI::ExistingDirectory);
  merge->callback([dir] {
    const std::vector<MergedPair> merged = merge_parts(*dir);
    if (merged.empty()) std::cout << "no parts to merge in " << *dir << "\n";
    for (const MergedPair& pair : merged)
      std::cout << "merged " << pair.parts << (pair.parts == 1 ? " part" : " parts") << " into " << *dir << "/"
                << pair.pair.compiler << "__" << pair.pair.library << ".parquet: " << pair.models << " models\n";
  });

  struct RemoveArgs {
    std::string dir = user_results_dir();
    std::vector<std::string> models;
  };
  auto args = std::make_shared<RemoveArgs>();
  CLI::App* remove = command->add_subcommand(
      "remove",
      "Take the rows of the named models out of every version pair's file (a model the catalog no\n"
      "longer selects) and rewrite the card; a model without a row is an error, and nothing changes");
  remove->add_option("dir", args->dir, "Dataset folder (default " + user_results_dir() + "/)")
      ->check(CLI::ExistingDirectory);
  remove->add_option("--model", args->models, "A model id, exactly as its rows name it (repeatable)")->required();
  remove->callback([args] {
    const std::set<std::string> wanted(args->models.begin(), args->models.end());
    std::set<std::string> found;
    for (const DatasetFile& file : list_dataset_files(args->dir))
      for (const ResultRow& row : read_pair(file))
        if (wanted.contains(row.model_id)) found.insert(row.model_id);
    for (const std::string& model : wanted)
      if (!found.contains(model)) fail(ErrorKind::kUsage, "--model '" + model + "': no row in " + args->dir);
    for (const RemovedRows& pair : remove_models(args->dir, wanted)) {
      std::cout << "removed from " << args->dir << "/" << dataset_file_name(pair.pair) << ":";
      for (const std::string& model : pair.models) std::cout << " " << model;
      std::cout << " (" << pair.rows_left << " rows left)\n";
    }
  });
}

}  // namespace canrun
