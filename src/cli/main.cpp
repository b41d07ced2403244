// canrun: can this Hugging Face model run here, correctly, and at what cost?
#include <iostream>

#include "cli/commands.h"
#include "cli/cores_option.h"
#include "cli/option_checks.h"
#include "util/error.h"
#include "util/version.h"

int main(int argc, char** argv) {
  CLI::App app{"canrun: load Hugging Face model folders as published and run them natively"};
  app.set_version_flag("--version", std::string("canrun ") + canrun::kVersion);
  app.require_subcommand(1);
  canrun::add_generate_command(app);
  canrun::add_tokenize_command(app);
  canrun::add_embed_command(app);
  canrun::add_rerank_command(app);
  canrun::add_catalog_command(app);
  canrun::add_archs_command(app);
  canrun::add_check_command(app);
  canrun::add_sweep_command(app);
  canrun::add_query_command(app);
  canrun::add_diff_command(app);
  canrun::add_repro_command(app);
  canrun::add_judge_command(app);
  canrun::add_serve_command(app);
  canrun::add_bench_command(app);
  canrun::add_report_command(app);
  canrun::add_cache_command(app);
  canrun::add_dataset_command(app);
  canrun::add_pull_command(app);
  canrun::add_preprocess_command(app);
  canrun::check_every_number(app);
  // CLI11 would call an unknown command a missing one.
  if (argc > 1 && argv[1][0] != '-') {
    std::string commands;
    bool known = false;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      commands += (commands.empty() ? "" : ", ") + command->get_name();
      known = known || command->check_name(argv[1]);
    }
    if (!known) {
      std::cerr << "error: '" << argv[1] << "' is not a canrun command (one of: " << commands << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too (0); every bad option or argument is a usage error, one
    // line in the form of every other error.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "error: " << e.what() << " (--help lists the options)\n" << std::flush;
    return 2;
  } catch (const canrun::WorkersEnded& ended) {
    return ended.status;
  } catch (const canrun::Error& e) {
    const int status = e.kind() == canrun::ErrorKind::kUsage ? 2 : 1;
    // One write per line: the workers of a sharded run share the terminal.
    std::cerr << "error: " + canrun::worker_label() + e.what() + "\n" << std::flush;
    canrun::end_all_workers(status);
    return status;
  } catch (const std::exception& e) {
    std::cerr << "error: " + canrun::worker_label() + e.what() + "\n" << std::flush;
    canrun::end_all_workers(1);
    return 1;
  }
  return 0;
}
