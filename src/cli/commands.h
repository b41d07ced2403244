// Each subcommand lives in its own file and registers itself on the root app.
#pragma once

#include <CLI/CLI.hpp>

namespace canrun {

void add_generate_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_embed_command(CLI::App& app);
void add_rerank_command(CLI::App& app);
void add_catalog_command(CLI::App& app);
void add_archs_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_query_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_repro_command(CLI::App& app);
void add_judge_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_dataset_command(CLI::App& app);
void add_pull_command(CLI::App& app);
void add_preprocess_command(CLI::App& app);

}  // namespace canrun
