// canrun rerank MODEL --query Q --doc D...: a cross-encoder's scores of documents against a query,
// highest first, as sentence-transformers' CrossEncoder.rank gives them.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_numbers.h"
#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/cores_option.h"
#include "cli/model_argument.h"
#include "cli/table.h"
#include "cli/text_lines.h"
#include "embed/cross_encoder.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

struct RerankArgs {
  std::string model_dir;
  std::string query;
  std::vector<std::string> documents;
  std::string file;
  std::string backend = "cpu";
  bool json = false;
  int cores = 1;
  CompileFlags compile;
};

// A document as a table shows it: one line, cut after 70 characters.
std::string shown(const std::string& text) {
  std::string line = text.substr(0, 70);
  for (char& c : line)
    if (c == '\n' || c == '\t') c = ' ';
  return text.size() > 70 ? line + "..." : line;
}

void run_rerank(const RerankArgs& args) {
  const std::vector<std::string> documents = args.file.empty() ? args.documents : read_text_lines(args.file, "--docs-file");
  if (documents.empty()) fail(ErrorKind::kUsage, "rerank: give --doc TEXT (repeatable) or --docs-file LINES.txt");
  const Backend backend = parse_backend(args.backend, "--backend");
  SessionOptions options;
  options.backend = backend;
  options.compile = compile_options(args.compile, backend);
  // Before the weights load: a model without a classification head is refused at once.
  cross_encoder_config(args.model_dir);
  // Sharded: every worker scores the same pairs with its part of each layer; rank 0 prints.
  options.comm = communicator_for(args.cores, args.model_dir);
  Session session(args.model_dir, options);
  CrossEncoder encoder(session);
  const std::vector<RankedDocument> ranked = encoder.rank(args.query, documents);
  if (options.comm->rank() != 0) return;
  if (args.json) {
    Json out = Json::array();
    for (const RankedDocument& document : ranked)
      out.push_back({{"index", document.index}, {"score", document.scores.size() == 1 ? Json(document.scores[0])
                                                                                     : Json(document.scores)}});
    std::cout << Json{{"model", args.model_dir}, {"query", args.query}, {"activation", encoder.head().activation_name},
                      {"ranking", out}}.dump()
              << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"rank", "score", "index", "document"}};
  for (size_t i = 0; i < ranked.size(); ++i)
    rows.push_back({std::to_string(i + 1), fixed(ranked[i].scores[0], 4), std::to_string(ranked[i].index),
                    shown(documents[static_cast<size_t>(ranked[i].index)])});
  print_aligned_table(rows);
}

}  // namespace

void add_rerank_command(CLI::App& app) {
  auto args = std::make_shared<RerankArgs>();
  CLI::App* command = app.add_subcommand(
      "rerank",
      "Score documents against a query with a cross-encoder (a *ForSequenceClassification folder: bert, distilbert, "
      "gte, modernbert, mpnet, roberta, xlm-roberta), highest first, as sentence-transformers' CrossEncoder ranks them");
  command->add_option("model_dir", args->model_dir,
                      "Model folder (config.json naming a *ForSequenceClassification, model.safetensors, "
                      "tokenizer.json), or a Hub id ORG/NAME[@REVISION]")
      ->required()
      ->transform(hub_model_folder());
  command->add_option("--query,-q", args->query, "The query")->required();
  CLI::Option* doc = command->add_option("--doc,-d", args->documents, "A document to score (repeat for more)");
  CLI::Option* file = command->add_option("--docs-file", args->file, "Score each line of this file");
  doc->excludes(file);
  command->add_option("--backend", args->backend,
                      "Kernels: cpu (default; compiled) or ref (the yardstick: f32 with double accumulation)")
      ->check(CLI::IsMember({"ref", "cpu"}));
  add_compile_flags(command, args->compile);
  add_cores_option(*command, args->cores);
  command->add_flag("--json", args->json, R"(Print {"ranking": [{"index", "score"}...]}, highest first)");
  command->callback([args] { run_rerank(*args); });
}

}  // namespace canrun
