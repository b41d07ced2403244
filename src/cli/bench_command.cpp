// canrun bench MODEL_DIR: what a migration decision needs to know about speed: load time,
// time to first token, prefill and decode speed, per-token latency percentiles, throughput,
// peak memory, failures and cost, for a workload of prompt/output lengths and concurrency; with
// --image, prompts that start with images, the vision tower's time reported apart.
// Sharded (--cores N), every worker runs the same requests and rank 0 reports.
#include <omp.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/bench_run.h"
#include "cli/bench_embed.h"
#include "cli/bench_endpoint.h"
#include "cli/bench_numbers.h"
#include "cli/commands.h"
#include "cli/compile_flags.h"
#include "cli/cores_option.h"
#include "cli/image_options.h"
#include "cli/kv_dtype_option.h"
#include "cli/model_argument.h"
#include "cli/option_checks.h"
#include "cli/prompt_lookup_flags.h"
#include "cli/table.h"
#include "kernels/cpu/instruction_set.h"
#include "lab/software_stack.h"
#include "runtime/model_config.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/json.h"
#include "util/process_stats.h"
#include "util/progress_line.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

struct BenchArgs {
  std::string model_dir;
  std::string prompt_tokens = "128";
  std::string prompt_file;  // every prompt this text's tokens instead of random ids
  std::string output_tokens = "32";
  std::string backend = "cpu";
  CompileFlags compile;
  Workload workload;
  ImageFlags images;
  int64_t image_tokens = 0;  // what the images take of every prompt (image_prompt_prefix)
  int threads = 0;  // 0: every core (a worker's share of them when sharded)
  int cores = 1;
  double price_per_hour = 0;
  bool priced = false;
  bool json = false;
  EndpointBenchOptions endpoint;  // used when endpoint.url is set
  std::string sweep_concurrency;  // endpoint.sweep as given, comma-separated
  std::string texts;              // an encoder's texts, one per line
  int64_t batch = 32;             // an encoder's texts per call
};

// Milliseconds below a second, seconds above: start-up and latencies span both.
std::string duration(double seconds) {
  return seconds < 1 ? fixed(seconds * 1000, seconds < 0.01 ? 2 : 1) + " ms" : fixed(seconds, 2) + " s";
}

// The machine's price per hour, when given.
std::optional<double> price(const BenchArgs& args) {
  return args.priced ? std::optional<double>(args.price_per_hour) : std::nullopt;
}

// What the products compute in: f32, except that the cpu kernels of x86_64-avx512-bf16 round
// the activations to bf16 where they multiply bf16 weights.
std::string compute_precision(const BenchArgs& args, const std::string& weights_dtype) {
  if (args.backend == "cpu" && weights_dtype == "BF16" &&
      cpu::chosen_instruction_set() == cpu::InstructionSet::kAvx512Bf16)
    return "F32, bf16 products (activations rounded to bf16)";
  return "F32";
}

// The software stack without its backend entry: the bench names the backend it ran itself.
std::vector<StackComponent> bench_stack() {
  std::vector<StackComponent> stack = software_stack();
  std::erase_if(stack, [](const StackComponent& component) { return component.component == "backend"; });
  return stack;
}

// The compile step measured twice: into an empty plan cache, then from it, as a first and a
// later start of the same model would find it.
struct CompileMeasurement {
  double cold_s = 0, warm_s = 0;
  double cold_load_s = 0;  // the load before the cold compile
  CompileStats warm;
};

struct Measured {
  std::string architecture;
  std::string weights_dtype;
  double load_s = 0;
  std::optional<CompileMeasurement> compile;
  BenchRun run;
  BenchResults results;
  int64_t peak_rss_bytes = 0;
};

Json report_json(const BenchArgs& args, const Measured& measured) {
  const BenchResults& results = measured.results;
  const double all_tokens_per_s =
      measured.run.wall_s > 0 ? static_cast<double>(results.prompt_tokens + results.generated_tokens) /
                                    measured.run.wall_s
                              : 0;
  Json stack = Json::object();
  for (const StackComponent& component : bench_stack()) stack[component.component] = component.version;
  return {{"model", args.model_dir},
          {"architecture", measured.architecture},
          {"weights_dtype", measured.weights_dtype},
          {"compute_dtype", compute_precision(args, measured.weights_dtype)},
          {"backend", args.backend},
          {"workload",
           {{"prompt_tokens", args.workload.prompt.text()},
            {"output_tokens", args.workload.output.text()},
            {"requests", args.workload.requests},
            {"warmup", args.workload.warmup},
            {"concurrency", args.workload.concurrency},
            {"prefill_chunk", args.workload.concurrency > 1 ? args.workload.prefill_chunk : 0},
            {"seed", args.workload.seed},
            {"images", args.images.files},
            {"image_tokens", args.image_tokens},
            {"prompt_file", args.prompt_file.empty() ? Json(nullptr) : Json(args.prompt_file)},
            {"kv_dtype", kv_dtype_name(args.workload.kv_dtype)}}},
          {"cores", args.cores},
          {"threads", args.threads},
          {"software_stack", stack},
          {"load_s", measured.load_s},
          {"compile_s", measured.compile ? Json(measured.compile->warm_s) : Json(nullptr)},
          {"compile",
           measured.compile ? Json{{"cold_s", measured.compile->cold_s},
                                   {"warm_s", measured.compile->warm_s},
                                   {"buckets", measured.compile->warm.buckets},
                                   {"recompilations", measured.compile->warm.recompilations},
                                   {"plan_bytes", measured.compile->warm.plan_bytes},
                                   {"peak_activation_bytes", measured.compile->warm.peak_activation_bytes},
                                   {"tuned_products", measured.compile->warm.tuned_products},
                                   {"onednn_products", measured.compile->warm.onednn_products}}
                            : Json(nullptr)},
          {"first_token_s", summary_json(results.first_token_s)},
          {"vision_s", args.images.files.empty() ? Json(nullptr) : summary_json(results.vision_s)},
          {"prefill_tokens_per_s", results.prefill_tokens_per_s},
          {"decode_tokens_per_s", results.decode_tokens_per_s},
          {"token_latency_s", summary_json(results.token_latency_s)},
          {"throughput_tokens_per_s", results.throughput_tokens_per_s},
          {"wall_s", measured.run.wall_s},
          {"prompt_tokens", results.prompt_tokens},
          {"generated_tokens", results.generated_tokens},
          {"prompt_lookup",
           prompt_lookup_json(args.workload.prompt_lookup, results.drafted_tokens, results.accepted_tokens)},
          {"peak_rss_bytes", measured.peak_rss_bytes},
          {"failures", results.failures},
          {"errors", results.errors},
          {"price_per_hour", args.priced ? Json(args.price_per_hour) : Json(nullptr)},
          {"cost_per_million_generated_tokens", cost_per_million(price(args), results.throughput_tokens_per_s)},
          {"cost_per_million_tokens", cost_per_million(price(args), all_tokens_per_s)}};
}

void print_report(const BenchArgs& args, const Measured& measured) {
  const BenchResults& results = measured.results;
  const Workload& workload = args.workload;
  std::cout << "canrun bench " << args.model_dir << ": " << measured.architecture << ", "
            << measured.weights_dtype << " weights computed in " << compute_precision(args, measured.weights_dtype)
            << ", backend " << args.backend << "\nworkload: prompt "
            << (args.images.files.empty() ? ""
                                          : std::to_string(args.images.files.size()) +
                                                (args.images.files.size() == 1 ? " image (" : " images (") +
                                                std::to_string(args.image_tokens) + " tokens) then ")
            << workload.prompt.text() << (args.prompt_file.empty() ? "" : " (" + args.prompt_file + ")")
            << " tokens, output " << workload.output.text()
            << " tokens, " << workload.requests << " requests after " << workload.warmup << " warm-up, concurrency "
            << workload.concurrency
            << (workload.concurrency == 1    ? ""
                : workload.prefill_chunk > 0 ? " (prompts in pieces of " + std::to_string(workload.prefill_chunk) + ")"
                                             : " (prompts at once)")
            << ", " << args.cores << (args.cores == 1 ? " core, " : " cores, ")
            << args.threads << " threads" << (args.cores == 1 ? "" : " in each") << ", seed " << workload.seed << ", KV cache "
            << kv_dtype_name(workload.kv_dtype) << "\nstack:";
  for (const StackComponent& component : bench_stack())
    std::cout << " " << component.component << " " << component.version << ";";
  std::cout << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"measure", "value"}};
  rows.push_back({"load", duration(measured.load_s)});
  if (measured.compile) {
    const CompileMeasurement& c = *measured.compile;
    rows.push_back({"compile", "cold " + duration(c.cold_s) + ", warm plan cache " + duration(c.warm_s) + " (" +
                                   std::to_string(c.warm.buckets.size()) + " prompt buckets, plan " +
                                   std::to_string(c.warm.plan_bytes >> 20) + " MiB, activations " +
                                   std::to_string(c.warm.peak_activation_bytes >> 10) + " KiB, " +
                                   std::to_string(c.warm.tuned_products) + " tuned products, " +
                                   std::to_string(c.warm.onednn_products) + " on oneDNN)"});
  } else {
    rows.push_back({"compile", "- (" + std::string(args.backend == "ref" ? "the ref backend is never compiled" : "--no-compile") + ")"});
  }
  rows.push_back({"time to first token", "p50 " + duration(results.first_token_s.p50) + ", p95 " +
                                             duration(results.first_token_s.p95)});
  if (!args.images.files.empty())
    rows.push_back({"vision encoder", "p50 " + duration(results.vision_s.p50) + ", p95 " +
                                          duration(results.vision_s.p95) +
                                          " per request (in its time to first token)"});
  rows.push_back({"prefill", fixed(results.prefill_tokens_per_s, 1) + " tokens/s" +
                                 (args.images.files.empty() ? "" : " (image tokens included)")});
  rows.push_back({"decode", fixed(results.decode_tokens_per_s, 1) + " tokens/s per request"});
  if (workload.prompt_lookup.draft_tokens > 0)
    rows.push_back({"speculation", prompt_lookup_summary(results.drafted_tokens, results.accepted_tokens) +
                                       ", up to " + std::to_string(workload.prompt_lookup.draft_tokens) + " a step"});
  rows.push_back({"per-token latency", "p50 " + duration(results.token_latency_s.p50) + ", p95 " +
                                           duration(results.token_latency_s.p95)});
  rows.push_back({"throughput", fixed(results.throughput_tokens_per_s, 1) + " generated tokens/s (" +
                                    std::to_string(results.generated_tokens) + " in " +
                                    duration(measured.run.wall_s) + ")"});
  rows.push_back({"peak memory", std::to_string(measured.peak_rss_bytes >> 20) + " MiB resident"});
  rows.push_back({"failures", std::to_string(results.failures) + " of " + std::to_string(workload.requests)});
  const Json cost = cost_per_million(price(args), results.throughput_tokens_per_s);
  if (args.priced)
    rows.push_back({"cost", cost.is_null() ? "- (nothing generated)"
                                           : "$" + fixed(cost.get<double>(), 4) + " per million generated tokens at $" +
                                                 fixed(args.price_per_hour, 2) + "/hour"});
  print_aligned_table(rows);
  for (const std::string& error : results.errors) std::cout << "error: " << error << "\n";
}

void check_fits(const BenchArgs& args, const DecoderSpec& spec) {
  const int64_t longest = args.image_tokens + args.workload.prompt.high + args.workload.output.high;
  if (longest > spec.max_positions)
    fail(ErrorKind::kUsage, (args.image_tokens > 0 ? "with the images' " + std::to_string(args.image_tokens) +
                                                         " tokens, "
                                                   : std::string()) +
                                "--prompt-tokens " + args.workload.prompt.text() + " plus --output-tokens " +
                                args.workload.output.text() + " reaches " + std::to_string(longest) +
                                " positions, more than the model's max_position_embeddings of " +
                                std::to_string(spec.max_positions));
}

double seconds_to(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every prompt bucket the workload's lengths reach, compiled up front so that no request
// waits for a compilation inside the measurement.
void prepare_buckets(const BenchArgs& args, Session& session) {
  for (int64_t length = args.image_tokens + args.workload.prompt.low;;) {
    const int64_t bucket = session.prepare(length, args.workload.output.high).bucket;
    if (bucket >= args.image_tokens + args.workload.prompt.high) break;
    length = bucket + 1;
  }
}

// Opens the model twice, compiling into an empty plan cache and then from it; leaves `session`
// open from the warm plan cache.
CompileMeasurement measure_compile(const BenchArgs& args, const SessionOptions& options,
                                   std::unique_ptr<Session>& session) {
  CompileMeasurement m;
  {
    const auto start = std::chrono::steady_clock::now();
    Session cold(args.model_dir, options);
    prepare_buckets(args, cold);
    m.cold_load_s = cold.load_seconds();
    m.cold_s = seconds_to(start) - m.cold_load_s;
  }
  if (options.compile->progress) options.compile->progress("loading again from the plan cache", 0, 0);
  const auto start = std::chrono::steady_clock::now();
  session = std::make_unique<Session>(args.model_dir, options);
  prepare_buckets(args, *session);
  m.warm_s = seconds_to(start) - session->load_seconds();
  m.warm = session->compiled()->stats();
  return m;
}

// --endpoint with --texts: the server's /v1/embeddings, --batch texts a request.
void run_endpoint_embeddings(const BenchArgs& args, const CLI::App& command) {
  for (const char* generation : {"--prompt-tokens", "--output-tokens", "--concurrency", "--seed", "--api",
                                 "--request-rate", "--burstiness", "--slo", "--sweep-concurrency", "--plot",
                                 "--vocab-size"})
    if (command.get_option(generation)->count() > 0)
      fail(ErrorKind::kUsage, std::string(generation) + " applies to a server's text generation; --texts benches "
                                                         "its /v1/embeddings one request after another");
  if (!args.model_dir.empty())
    fail(ErrorKind::kUsage, "--texts with --endpoint sends the texts themselves: MODEL_DIR is not needed");
  EndpointEmbedBenchCommand embed;
  embed.url = args.endpoint.url;
  embed.served_model = args.endpoint.served_model;
  embed.texts = args.texts;
  embed.bench.batch = args.batch;
  embed.bench.requests = args.workload.requests;
  embed.bench.warmup = args.workload.warmup;
  embed.timeout_s = args.endpoint.timeout_s;
  embed.price_per_hour = price(args);
  embed.json = args.json;
  run_endpoint_embed_bench_command(embed);
}

// With --endpoint the server runs the model: options about canrun's own run make no sense.
void run_endpoint(BenchArgs& args, const CLI::App& command) {
  for (const char* local : {"--backend", "--threads", "--cores", "--kv-dtype", "--no-compile", "--buckets",
                            "--products", "--prefill-chunk", "--image", "--max-image-pixels", "--prompt-file",
                            "--prompt-lookup", "--prompt-lookup-ngram"})
    if (command.get_option_no_throw(local) && command.get_option(local)->count() > 0)
      fail(ErrorKind::kUsage, std::string(local) + " sets how canrun runs a model; with --endpoint the server runs it");
  if (!args.texts.empty()) return run_endpoint_embeddings(args, command);
  if (command.get_option("--batch")->count() > 0)
    fail(ErrorKind::kUsage, "--batch applies to an encoder's --texts; give --texts FILE to bench /v1/embeddings");
  args.endpoint.tokenizer_source = args.model_dir;
  args.endpoint.json = args.json;
  if (args.priced) args.endpoint.price_per_hour = args.price_per_hour;
  args.endpoint.concurrency_given = command.get_option("--concurrency")->count() > 0;
  if (!args.sweep_concurrency.empty())
    for (const std::string& item : comma_items(args.sweep_concurrency)) args.endpoint.sweep.push_back(std::stoll(item));
  run_endpoint_bench_command(args.endpoint, args.workload);
}

// An encoder's bench: batches of --texts through the sentence-transformers pipeline.
void run_encoder(const BenchArgs& args, const CLI::App& command, const SessionOptions& options) {
  for (const char* generation : {"--prompt-tokens", "--output-tokens", "--concurrency", "--prefill-chunk",
                                 "--image", "--max-image-pixels", "--cores", "--kv-dtype", "--seed", "--prompt-file",
                                 "--prompt-lookup", "--prompt-lookup-ngram"})
    if (command.get_option_no_throw(generation) && command.get_option(generation)->count() > 0)
      fail(ErrorKind::kUsage, std::string(generation) + " applies to a model that generates text; " + args.model_dir +
                                  " is an encoder (give --texts FILE and --batch N)");
  if (args.texts.empty())
    fail(ErrorKind::kUsage, args.model_dir + " is an encoder: give --texts FILE (one text per line) to embed");
  EmbedBenchCommand embed;
  embed.model_dir = args.model_dir;
  embed.texts = args.texts;
  embed.backend = args.backend;
  embed.session = options;
  embed.bench.batch = args.batch;
  embed.bench.requests = args.workload.requests;
  embed.bench.warmup = args.workload.warmup;
  embed.threads = args.threads;
  embed.price_per_hour = price(args);
  embed.json = args.json;
  run_embed_bench_command(embed);
}

void run(BenchArgs& args, const CLI::App& command) {
  args.workload.prompt = parse_lengths(args.prompt_tokens, "--prompt-tokens", 1);
  args.workload.output = parse_lengths(args.output_tokens, "--output-tokens", 1);
  if (!args.endpoint.url.empty()) return run_endpoint(args, command);
  if (args.model_dir.empty()) fail(ErrorKind::kUsage, "MODEL_DIR is required (or --endpoint URL)");
  for (const char* remote : {"--request-rate", "--burstiness", "--slo", "--served-model", "--api", "--timeout",
                             "--vocab-size", "--sweep-concurrency", "--plot"})
    if (command.get_option(remote)->count() > 0)
      fail(ErrorKind::kUsage, std::string(remote) + " applies to a server's bench: give --endpoint URL");
  const Backend backend = parse_backend(args.backend, "--backend");
  if (args.cores > 1 && args.workload.concurrency > 1)
    fail(ErrorKind::kUsage, "--concurrency " + std::to_string(args.workload.concurrency) + " with --cores " +
                                std::to_string(args.cores) +
                                ": a sharded model serves one request at a time (--concurrency 1)");
  SessionOptions options;
  options.backend = backend;
  options.compile = compile_options(args.compile, backend);
  // The config, the images and the lengths before any worker starts or weights load: a bad image
  // or workload is one error, at once.
  const DecoderSpec model = read_model_spec(args.model_dir);
  if (model.output == ModelOutput::kHiddenStates) return run_encoder(args, command, options);
  for (const char* encoder_only : {"--texts", "--batch"})
    if (command.get_option(encoder_only)->count() > 0)
      fail(ErrorKind::kUsage, std::string(encoder_only) + " measures an encoder's embeddings; " + args.model_dir +
                                  " is a " + model.model_type + " model that generates text");
  if (!args.images.files.empty()) check_takes_images(model, args.model_dir, "--image");
  else if (command.get_option("--max-image-pixels")->count() > 0)
    fail(ErrorKind::kUsage, "--max-image-pixels applies to the images of --image");
  const std::optional<PreparedImages> images =
      prepare_images(args.model_dir, args.images.files, args.images.max_pixels);
  const std::vector<int32_t> image_prefix =
      images ? image_prompt_prefix(model.image_token_id, images->token_counts, model.vocab_size)
             : std::vector<int32_t>{};
  args.image_tokens = static_cast<int64_t>(image_prefix.size());
  std::vector<int32_t> file_prompt;
  if (!args.prompt_file.empty()) {
    if (command.get_option("--prompt-tokens")->count() > 0)
      fail(ErrorKind::kUsage, "--prompt-tokens: with --prompt-file the prompt is the file's tokens");
    const Tokenizer tokenizer =
        Tokenizer::from_file((std::filesystem::path(args.model_dir) / "tokenizer.json").string());
    file_prompt = tokenizer.encode(read_text_file(args.prompt_file)).ids;
    if (file_prompt.empty()) fail(ErrorKind::kUsage, "--prompt-file " + args.prompt_file + ": the text has no tokens");
    const int64_t length = static_cast<int64_t>(file_prompt.size());
    args.workload.prompt = {length, length};
  }
  check_fits(args, model);
  std::shared_ptr<Communicator> comm = communicator_for(args.cores, args.model_dir);
  const bool reports = comm->rank() == 0;
  if (args.threads == 0) args.threads = omp_get_max_threads();
  options.comm = comm;
  Measured measured;
  ProgressLine progress("bench", progress_style(args.json || !reports));
  std::unique_ptr<Session> session;
  if (options.compile) {
    options.compile->progress = progress.reporter();
    progress.report("loading and compiling into an empty plan cache");
    // A throwaway plan cache: the cold compile always starts from nothing. The warm plan stays
    // mapped after the folder goes.
    const TemporaryDirectory folder("canrun-bench-plans-");
    options.compile->cache_dir = folder.path().string();
    measured.compile = measure_compile(args, options, session);
  } else {
    session = std::make_unique<Session>(args.model_dir, options);
  }
  // The first open's load, as a first `generate` sees it; the second open reads what the first
  // left in the page cache.
  measured.load_s = measured.compile ? measured.compile->cold_load_s : session->load_seconds();
  const DecoderSpec& spec = session->spec();
  measured.architecture = spec.model_type;
  measured.weights_dtype = std::string(dtype_name(session->stored_dtype()));

  std::vector<BenchRequest> requests = make_requests(args.workload, spec.vocab_size);
  if (!file_prompt.empty())
    for (BenchRequest& request : requests) request.prompt = file_prompt;
  if (images)
    add_images(requests, image_prefix, std::make_shared<const PixelValues>(images->pixels), spec.image_token_id,
               spec.vocab_size);
  const std::string step = "requests, the warm-up ones first";
  progress.report(step, 0, args.workload.warmup + args.workload.requests);
  measured.run = run_bench(*session, requests, args.workload, args.threads,
                           [&](int64_t done, int64_t total) { progress.report(step, done, total); });
  progress.close();
  measured.results = summarize_run(measured.run);
  measured.peak_rss_bytes = peak_resident_bytes();

  if (reports && args.json) std::cout << report_json(args, measured).dump(2) << "\n";
  if (reports && !args.json) print_report(args, measured);
  if (measured.results.failures > 0)
    fail(ErrorKind::kRuntime, std::to_string(measured.results.failures) + " of " +
                                  std::to_string(args.workload.requests) + " requests failed: " +
                                  measured.results.errors.front());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "Measure a model folder: load time, time to first token, prefill and decode tokens/s, per-token\n"
      "latency p50/p95, throughput, peak memory and failures, over requests of random token ids whose\n"
      "prompt and output lengths are drawn from the given ranges (outputs always run to full length).\n"
      "With --endpoint URL, measure an OpenAI-compatible server instead (canrun's, llama.cpp's, vLLM, TGI):\n"
      "TTFT, TPOT, inter-token and end-to-end latency (mean, p50, p90, p95, p99), request and token\n"
      "throughput, goodput under --slo, at a fixed concurrency or --request-rate, or swept over concurrencies.");
  command->add_option("model_dir", args->model_dir,
                      "Model folder (config.json, safetensors, ...) or a Hub id ORG/NAME[@REVISION]. With "
                      "--endpoint: optional, a model folder or tokenizer.json whose text the prompts are (else they "
                      "are sent as token ids)")
      ->transform(hub_model_folder())
      ->check(CLI::ExistingPath);
  command->add_option("--prompt-tokens", args->prompt_tokens,
                      "Prompt length: N or LOW-HIGH (default 128); with --image, the text after the images");
  command->add_option("--prompt-file", args->prompt_file,
                      "Every prompt this file's text (its tokens, special ones added as generate --prompt adds "
                      "them) instead of random ids: a workload that repeats itself, for --prompt-lookup")
      ->check(regular_file_check());
  command->add_option("--output-tokens", args->output_tokens, "Generated tokens: N or LOW-HIGH (default 32)");
  command->add_option("--backend", args->backend,
                      "Kernels: cpu (default; compiled: measured cold and from a warm plan cache; bf16 kept "
                      "as bf16, f32 accumulation, the processor's best instruction set or CANRUN_ISA's) or ref (the "
                      "yardstick: weights as stored, each widened to f32 as a product reads it, double accumulation)")
      ->check(CLI::IsMember({"ref", "cpu"}));
  add_compile_flags(command, args->compile, /*cache_flags=*/false);
  command->add_option("--requests", args->workload.requests, "Measured requests (default 5)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  command->add_option("--warmup", args->workload.warmup, "Requests run first and not measured (default 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}));
  command->add_option("--concurrency", args->workload.concurrency,
                      "Requests in flight at once (default 1), decoded together: each step reads the weights once "
                      "for all of them")
      ->check(CLI::Range(int64_t{1}, int64_t{256}));
  command->add_option("--prefill-chunk", args->workload.prefill_chunk,
                      "With --concurrency above 1: a newcomer's prompt runs this many tokens per step, between "
                      "the others' decode steps (default 256; 0: all at once, the others waiting)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command->add_option("--threads", args->threads, "Threads (default: every core)")
      ->check(CLI::Range(1, 1024));
  add_cores_option(*command, args->cores);
  add_image_options(*command, args->images,
                    "An image-text-to-text model's image in front of every prompt (JPEG, PNG or WebP; repeat for "
                    "more): prefill then holds its image tokens, and the vision tower's time per request is "
                    "reported apart (the images are decoded and preprocessed once, before the model loads; with "
                    "--concurrency, a newcomer's vision tower runs whole while the others wait)");
  command->add_option("--seed", args->workload.seed, "Seed of the prompts' token ids and lengths (default 0)");
  add_kv_dtype_option(*command, args->workload.kv_dtype);
  add_prompt_lookup_flags(*command, args->workload.prompt_lookup);
  command->add_option("--price-per-hour", args->price_per_hour,
                      "The machine's price per hour (e.g. in USD): adds the cost per million tokens")
      ->check(CLI::NonNegativeNumber)
      ->each([args](const std::string&) { args->priced = true; });
  command->add_flag("--json", args->json, "Print the results as JSON");
  command->add_option("--texts", args->texts,
                      "An encoder (canrun embed's models), or with --endpoint a server's /v1/embeddings: embed "
                      "the lines of this file, --batch at a time, --requests calls measured after --warmup; "
                      "reports sentences/s, tokens/s and the latency of a call");
  command->add_option("--batch", args->batch, "An encoder: texts per call or request (default 32)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  EndpointBenchOptions& endpoint = args->endpoint;
  command->add_option("--endpoint", endpoint.url,
                      "Bench an OpenAI-compatible server: http(s)://HOST[:PORT][/PREFIX] (requests go to "
                      "PREFIX/v1/completions), or the full URL of /v1/completions or /v1/chat/completions. "
                      "OPENAI_API_KEY, when set, is sent as the bearer token");
  command->add_option("--served-model", endpoint.served_model,
                      "With --endpoint: the request's model (default: the first the server's /v1/models lists)");
  command->add_option("--api", [&endpoint](const CLI::results_t& value) {
    endpoint.chat = value.front() == "chat";
    return true;
  }, "With --endpoint: completions (default) or chat (needs MODEL_DIR for the text)")
      ->type_name("API")
      ->check(CLI::IsMember({"completions", "chat"}));
  command->add_option("--request-rate", endpoint.arrivals.rate,
                      "With --endpoint: requests per second, sent at gamma-distributed gaps (default: all at once, "
                      "--concurrency at a time; with a rate and no --concurrency, no limit)")
      ->check(CLI::PositiveNumber);
  command->add_option("--burstiness", endpoint.arrivals.burstiness,
                      "With --request-rate: the gaps' gamma shape: 1 (default) a Poisson process, below 1 burstier, "
                      "above 1 more even")
      ->check(CLI::PositiveNumber);
  command->add_option("--slo", endpoint.slo,
                      "With --endpoint: service-level objectives for goodput, e.g. ttft=500ms,tpot=50ms,e2el=10s");
  command->add_option("--sweep-concurrency", args->sweep_concurrency,
                      "With --endpoint: run the workload at each of these concurrencies in turn (e.g. 1,2,4,8)")
      ->check(comma_list_check(number_check(NumberKind::kSigned) & CLI::Range(int64_t{1}, int64_t{1024})));
  command->add_option("--plot", endpoint.plot,
                      "With --sweep-concurrency: write the sweep as an SVG of median TTFT and TPOT against output "
                      "tokens/s");
  command->add_option("--timeout", endpoint.timeout_s,
                      "With --endpoint: seconds a request may wait for the server's next bytes (default 600)")
      ->check(CLI::PositiveNumber);
  command->add_option("--vocab-size", endpoint.vocab_size,
                      "With --endpoint and no MODEL_DIR: prompt token ids are drawn below this")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  command->callback([args, command] { run(*args, *command); });
}

}  // namespace canrun
