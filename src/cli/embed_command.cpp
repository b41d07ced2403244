// canrun embed MODEL --text T... | --file LINES.txt: sentence embeddings from an encoder folder,
// run as sentence-transformers runs it (modules.json: Transformer, Pooling, Dense, Normalize).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/cores_option.h"
#include "cli/model_argument.h"
#include "cli/text_lines.h"
#include "embed/sentence_model.h"
#include "runtime/model_config.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json.h"
#include "util/npy.h"

namespace canrun {
namespace {

struct EmbedArgs {
  std::string model_dir;
  std::vector<std::string> texts;
  std::string file;
  std::string prompt_name;
  bool normalize = false;
  bool no_truncate = false;
  std::string format = "json";
  std::string output;
  std::string backend = "cpu";
  int64_t batch_tokens = 8192;
  int cores = 1;
  CompileFlags compile;
};

void run_embed(const EmbedArgs& args) {
  const std::vector<std::string> texts = args.file.empty() ? args.texts : read_text_lines(args.file, "--file");
  if (texts.empty()) fail(ErrorKind::kUsage, "embed: give --text TEXT (repeatable) or --file LINES.txt");
  if (args.format == "npy" && args.output.empty()) fail(ErrorKind::kUsage, "--format npy: give --output FILE.npy");
  const Backend backend = parse_backend(args.backend, "--backend");
  SessionOptions options;
  options.backend = backend;
  options.compile = compile_options(args.compile, backend);
  // A text-generation model is refused before its weights load.
  require_encoder(read_model_spec(args.model_dir), args.model_dir);
  // Sharded: every worker reads the same texts and runs its part of each pass; rank 0 writes.
  options.comm = communicator_for(args.cores, args.model_dir);
  Session session(args.model_dir, options);
  SentenceEncoder encoder(session);
  EmbedOptions embed;
  if (!args.prompt_name.empty()) embed.prompt_name = args.prompt_name;
  embed.normalize = args.normalize;
  embed.truncate = !args.no_truncate;
  embed.batch_tokens = args.batch_tokens;
  const Embeddings result = encoder.embed(texts, embed);
  if (options.comm->rank() != 0) return;
  const int64_t rows = static_cast<int64_t>(texts.size());
  if (args.format == "npy") {
    write_npy_f32(args.output, result.vectors.data(), rows, result.dimension);
    std::cerr << "wrote " << rows << " x " << result.dimension << " float32 to " << args.output << "\n";
    return;
  }
  Json embeddings = Json::array();
  for (int64_t i = 0; i < rows; ++i)
    embeddings.push_back(std::vector<float>(result.vectors.begin() + i * result.dimension,
                                            result.vectors.begin() + (i + 1) * result.dimension));
  const Json out{{"model", args.model_dir},
                 {"backend", args.backend},
                 {"dimension", result.dimension},
                 {"tokens", result.token_counts},
                 {"embeddings", embeddings}};
  if (args.output.empty()) {
    std::cout << out.dump() << "\n";
  } else {
    write_file_atomically(args.output, out.dump() + "\n");
  }
}

}  // namespace

void add_embed_command(CLI::App& app) {
  auto args = std::make_shared<EmbedArgs>();
  CLI::App* command = app.add_subcommand(
      "embed",
      "Sentence embeddings from an encoder folder (bert, distilbert, gte, modernbert, mpnet, nomic_bert, roberta, "
      "xlm-roberta) or a "
      "sentence-transformers folder over a text-generation family (Qwen3-Embedding, EmbeddingGemma), run as "
      "sentence-transformers runs it: its modules.json's Transformer, Pooling, Dense and Normalize modules and its "
      "prompts");
  command->add_option("model_dir", args->model_dir,
                      "Model folder (config.json, model.safetensors, tokenizer.json, modules.json...), or a Hub id "
                      "ORG/NAME[@REVISION] found in the Hugging Face cache or downloaded into it")
      ->required()
      ->transform(hub_model_folder());
  CLI::Option* text = command->add_option("--text,-t", args->texts, "A text to embed (repeat for more)");
  CLI::Option* file = command->add_option("--file", args->file, "Embed each line of this file");
  text->excludes(file);
  command->add_option("--prompt-name", args->prompt_name,
                      "Put this prompt of config_sentence_transformers.json before every text (e.g. query); "
                      "default: the folder's default_prompt_name, if any");
  command->add_flag("--normalize", args->normalize,
                    "L2-normalise the embeddings (the folder's Normalize module does it already where it has one)");
  command->add_flag("--no-truncate", args->no_truncate,
                    "Refuse a text longer than max_seq_length instead of cutting it there");
  command->add_option("--format", args->format, "json (default: one object with every embedding) or npy")
      ->check(CLI::IsMember({"json", "npy"}));
  command->add_option("--output,-o", args->output, "Write to this file (required with --format npy)");
  command->add_option("--batch-tokens", args->batch_tokens,
                      "Tokens per forward pass at most; texts are batched whole up to it (default 8192)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command->add_option("--backend", args->backend,
                      "Kernels: cpu (default; compiled) or ref (the yardstick: f32 with double accumulation)")
      ->check(CLI::IsMember({"ref", "cpu"}));
  add_compile_flags(command, args->compile);
  add_cores_option(*command, args->cores);
  command->callback([args] { run_embed(*args); });
}

}  // namespace canrun
