// canrun generate MODEL_DIR --prompt TEXT [--backend ref|cpu] [--cores N]: greedy text generation.
// Sharded, every worker runs the same generation and rank 0 alone prints.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/cores_option.h"
#include "lab/verify.h"
#include "runtime/generate.h"
#include "runtime/loaded_model.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"
#include "util/process_stats.h"

namespace canrun {
namespace {

struct GenerateArgs {
  std::string model_dir;
  std::string prompt;
  std::string prompt_file;
  int64_t max_new_tokens = 32;
  int64_t cache_tokens = 0;
  int64_t top_logits = 0;
  std::string backend = "ref";
  CompileFlags compile;
  int cores = 1;
  bool json = false;
};

// The k largest logits after the prompt, highest first: where to look when a
// generation differs from another implementation's.
Json top_logits(const std::vector<float>& logits, int64_t k) {
  const std::vector<int32_t> ids = top_k_ids(logits, static_cast<int>(k));
  Json top = Json::array();
  for (int32_t id : ids) top.push_back({{"id", id}, {"logit", logits[id]}});
  return top;
}

double per_second(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_generate(const GenerateArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const Backend backend = parse_backend(args.backend, "--backend");
  const std::optional<CompileOptions> compile = compile_options(args.compile, backend);
  const std::string prompt = args.prompt_file.empty() ? args.prompt : read_text_file(args.prompt_file);
  std::shared_ptr<Communicator> comm = communicator_for(args.cores, args.model_dir);
  const bool prints = comm->rank() == 0;
  LoadedModel loaded = load_model(args.model_dir, backend, std::move(comm), /*populate_weights=*/!compile);
  const Tokenizer tokenizer =
      Tokenizer::from_file((std::filesystem::path(args.model_dir) / "tokenizer.json").string());
  const double load_seconds = seconds_since(start);

  const std::vector<int32_t> prompt_ids = tokenizer.encode(prompt).ids;
  GenerationOptions options;
  options.max_new_tokens = args.max_new_tokens;
  options.eos_token_ids = loaded.generation.eos_token_ids;
  options.cache_capacity = args.cache_tokens;
  // With --top-logits: the top ids at every generated position, what the top-5 rule compares.
  std::vector<std::vector<int32_t>> generated_top_ids;
  if (args.top_logits > 0)
    options.on_logits = [&](std::span<const float> logits) {
      generated_top_ids.push_back(top_k_ids(logits, static_cast<int>(args.top_logits)));
    };
  std::unique_ptr<CompiledModel> compiled;
  if (compile) {
    compiled = compile_loaded(loaded, *compile);
    const CompiledModel::Shape shape =
        compiled->prepare(static_cast<int64_t>(prompt_ids.size()), args.max_new_tokens);
    if (args.cache_tokens == 0) options.cache_capacity = shape.cache_capacity;
  }
  const double before_prefill = seconds_since(start);
  const GenerationResult result = generate_greedy(*loaded.model, prompt_ids, options);
  // From the command's start to the first generated token: load, compile and prefill.
  const double first_token_seconds = before_prefill + result.prefill_seconds;
  const std::string text = tokenizer.decode(result.tokens);

  const double prompt_count = static_cast<double>(prompt_ids.size());
  const double decode_steps = result.tokens.empty() ? 0.0 : static_cast<double>(result.tokens.size() - 1);
  const int64_t peak_rss = peak_resident_bytes();
  if (!prints) return;
  if (args.json) {
    Json out = {
        {"model", args.model_dir},
        {"backend", args.backend},
        {"cores", args.cores},
        {"model_type", loaded.model->spec().model_type},
        {"stored_dtype", std::string(dtype_name(loaded.stored_dtype))},
        {"prompt", prompt},
        {"prompt_ids", prompt_ids},
        {"generated_ids", result.tokens},
        {"text", text},
        {"stopped_at_eos", result.stopped_at_eos},
        {"timings",
         {{"load_s", load_seconds},
          {"compile_s", compiled ? Json(compiled->stats().seconds) : Json(nullptr)},
          {"recompilations", compiled ? compiled->stats().recompilations : 0},
          {"start_to_first_token_s", first_token_seconds},
          {"prefill_s", result.prefill_seconds},
          {"prefill_tokens_per_s", per_second(prompt_count, result.prefill_seconds)},
          {"decode_s", result.decode_seconds},
          {"decode_tokens_per_s", per_second(decode_steps, result.decode_seconds)}}},
        {"plan", compiled ? compiled->stats_json() : Json(nullptr)},
        {"kv_cache_bytes", result.kv_cache_bytes},
        {"peak_rss_bytes", peak_rss},
    };
    if (args.top_logits > 0) {
      out["prompt_top_logits"] = top_logits(result.prompt_logits, args.top_logits);
      out["generated_top_ids"] = generated_top_ids;
    }
    std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << text << std::endl;  // before the timing line when both go to one terminal
  if (compiled) {
    const CompileStats& plan = compiled->stats();
    std::fprintf(stderr, "compile %.2f s (%lld plan entries from the cache, %lld built) | ",
                 plan.seconds, static_cast<long long>(plan.cache_hits), static_cast<long long>(plan.compilations));
  }
  std::fprintf(stderr,
               "load %.2f s | prefill %zu tokens %.3f s (%.1f tok/s) | decode %zu tokens %.3f s (%.2f tok/s) | "
               "peak RSS %.0f MiB%s\n",
               load_seconds, prompt_ids.size(), result.prefill_seconds,
               per_second(prompt_count, result.prefill_seconds), result.tokens.size(), result.decode_seconds,
               per_second(decode_steps, result.decode_seconds), static_cast<double>(peak_rss) / (1 << 20),
               result.stopped_at_eos ? " | stopped at eos" : "");
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* command = app.add_subcommand(
      "generate", "Generate text greedily from a Hugging Face model folder (f32 compute)");
  command->add_option("model_dir", args->model_dir, "Model folder: config.json, *.safetensors, tokenizer.json")
      ->required();
  auto* prompt = command->add_option("--prompt,-p", args->prompt, "Prompt text");
  auto* prompt_file = command->add_option("--prompt-file", args->prompt_file, "Read the prompt from a file");
  prompt->excludes(prompt_file);
  command->add_option("--max-new-tokens,-n", args->max_new_tokens, "Tokens to generate (default 32)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command->add_option("--cache-tokens", args->cache_tokens,
                      "KV cache capacity in positions (default: prompt + max new tokens)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  command->add_option("--backend", args->backend,
                      "Kernels: ref (f32 weights, double accumulation; default) or cpu (compiled: weights packed "
                      "for its kernels, bf16 kept as bf16, f32 accumulation, AVX2)")
      ->check(CLI::IsMember({"ref", "cpu"}));
  add_compile_flags(command, args->compile);
  add_cores_option(*command, args->cores);
  command->add_flag("--json", args->json, "Print text, token ids and timings as JSON");
  command->add_option("--top-logits", args->top_logits,
                      "With --json: also print the K largest logits after the prompt, and the ids of the K "
                      "largest at every generated position")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command->callback([args, prompt, prompt_file] {
    if (prompt->count() == 0 && prompt_file->count() == 0)
      throw Error(ErrorKind::kUsage, "generate: give --prompt TEXT or --prompt-file FILE");
    run_generate(*args);
  });
}

}  // namespace canrun
