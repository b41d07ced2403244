// canrun dataset merge: folds the parts that sharded sweeps wrote into each pair's file.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "lab/results_dir.h"

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
}

}  // namespace canrun
