// canrun query: the dataset's rows for one version pair, filtered, as a table, JSON or CSV.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "lab/catalog.h"
#include "lab/query.h"
#include "lab/results_dir.h"
#include "lab/status.h"

namespace canrun {
namespace {

struct QueryArgs {
  std::string data_dir;  // empty: dataset_folders' default
  QueryFilter filter;
  std::string format = "table";
};

// The columns a reader scans for; --format json has every column.
const std::vector<std::string> kSummaryColumns = {"model_id", "task", "architecture", "weights", "result",
                                                  "cores", "wall_time_s", "peak_host_memory_bytes", "error_message"};

std::string cell(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", value.get<double>());
    return text;
  }
  return value.dump();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void print_table(const std::vector<Json>& rows) {
  std::vector<std::vector<std::string>> cells = {kSummaryColumns};
  for (const Json& row : rows) {
    std::vector<std::string> line;
    for (const std::string& column : kSummaryColumns) line.push_back(cell(row[column]).substr(0, 60));
    if (row["yours"].get<bool>()) line.front() = "* " + line.front();
    cells.push_back(line);
  }
  print_aligned_table(cells);
}

void run(const QueryArgs& args) {
  const QueryResult result = query_results(dataset_folders(args.data_dir), args.filter);
  std::vector<Json> rows;
  for (const ResultRow& row : result.rows) {
    rows.push_back(row_to_json(row));
    rows.back()["yours"] = result.yours.contains(row.model_id);
  }
  if (args.format == "json") {
    std::cout << Json(rows).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else if (args.format == "csv") {
    std::vector<std::string> columns = dataset_columns();
    columns.push_back("yours");
    std::string header;
    for (const std::string& column : columns) header += (header.empty() ? "" : ",") + column;
    std::cout << header << "\n";
    for (const Json& row : rows) {
      std::string line;
      for (const std::string& column : columns)
        line += (column == columns.front() ? "" : ",") + csv_field(cell(row[column]));
      std::cout << line << "\n";
    }
  } else {
    print_table(rows);
    std::string from;
    for (const std::string& path : result.files.paths()) from += (from.empty() ? "" : ", ") + path;
    std::cout << rows.size() << " rows from " << from << " (" << result.files.pair.compiler << " / "
              << result.files.pair.library << ")";
    if (!result.yours.empty()) std::cout << "; " << result.yours.size() << " of them yours (marked *)";
    std::cout << "\n";
  }
}

}  // namespace

void add_query_command(CLI::App& app) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* command = app.add_subcommand("query", "Show rows of the lab's dataset for one version pair");
  command->add_option("--data", args->data_dir,
                      "Dataset folder (default: the dataset canrun ships, " + shipped_dataset_dir() +
                          ", and your own results in " + user_results_dir() + "/, whose rows are marked yours)");
  command->add_option("--model", args->filter.model, "Only model ids containing this text (any case)");
  command->add_option("--task", args->filter.task, "Only this task")->check(CLI::IsMember(catalog_tasks()));
  command->add_option("--result", args->filter.result, "Only this status, e.g. PASS or TIMEOUT");
  command->add_option("--workload", args->filter.workload, "Only generation checks (inference) or training checks (train)")
      ->check(CLI::IsMember({"inference", "train"}));
  command->add_option("--dtype", args->filter.dtype, "Only training checks computing in this dtype")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  command->add_option("--compiler", args->filter.compiler,
                      "Version pair: compiler version, e.g. canrun-0.1.0 (default: the newest pair present)");
  command->add_option("--library", args->filter.library, "Version pair: library version, e.g. cpu-x86_64-avx2-fma");
  command->add_option("--format", args->format, "table (default), json (every column) or csv (every column)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  command->callback([args] { run(*args); });
}

}  // namespace canrun
