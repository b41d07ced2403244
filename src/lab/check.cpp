#include "lab/check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <new>

#include "checkpoint/config_reader.h"
#include "compile/compiler.h"
#include "lab/planner.h"
#include "lab/reproduce.h"
#include "lab/software_stack.h"
#include "lab/status.h"
#include "lab/synthetic_weights.h"
#include "lab/verify.h"
#include "models/registry.h"
#include "runtime/loaded_model.h"
#include "tokenizer/tokenizer.h"
#include "util/process_stats.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The plan cache folder is left out: a fresh clone compiles into its default one, and a plan
// changes the speed of a check, never its tokens.
std::string check_arguments(const ModelSource& source, const CheckOptions& options) {
  std::string args = shell_quote(source.model_id);
  if (source.synthetic()) args += " --synthetic";
  args += " --profile " + shell_quote(options.profile);
  if (!options.profiles_file.empty()) args += " --profiles " + shell_quote(options.profiles_file);
  if (!options.catalog.empty()) args += " --catalog " + shell_quote(options.catalog);
  return args;
}

// The fault CANRUN_CHECK_FAULT asks of `model_id`: "KIND" for every model, or a comma list of
// "KIND:MODEL_ID"; "" for none.
std::string requested_fault(const std::string& model_id) {
  const char* value = std::getenv(kFaultVariable);
  std::stringstream items(value ? value : "");
  for (std::string item; std::getline(items, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return item;
    if (item.substr(colon + 1) == model_id) return item.substr(0, colon);
  }
  return "";
}

std::string script_for(const ModelSource& source, const CheckOptions& options, const std::string& expected_result) {
  const VersionPair pair = engine_version_pair();
  return reproduce_script({check_arguments(source, options), source.model_id, source.weights(),
                           source.revision.value_or(""), expected_result, pair.compiler + " / " + pair.library});
}

void inject_fault_if_requested(const std::string& model_id) {
  const std::string kind = requested_fault(model_id);
  if (kind.empty()) return;
  if (kind == "crash") std::abort();
  if (kind == "hang")
    for (;;) pause();
  if (kind == "oom") {
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    if (limit.rlim_cur == RLIM_INFINITY)
      fail(ErrorKind::kUsage, std::string(kFaultVariable) + "=oom needs a finite address-space limit (sweep --memory-limit)");
    std::vector<std::unique_ptr<char[]>> blocks;
    for (;;) {
      blocks.emplace_back(new char[64 << 20]);
      std::memset(blocks.back().get(), 1, 64 << 20);  // touch it, as a real model would
    }
  }
  fail(ErrorKind::kUsage, std::string(kFaultVariable) + ": '" + kind + "' is not one of crash, hang, oom");
}

void fail_row(ResultRow& row, Status status, const std::string& type, const std::string& message) {
  row.result = status_name(status);
  row.error_type = type;
  row.error_message = message;
}

struct Prompt {
  std::vector<int32_t> ids;
  std::optional<Tokenizer> tokenizer;  // none for synthetic weights
};

// The fixed prompt as token ids; synthetic weights have no tokenizer, so the row says how the
// ids were made.
Prompt check_prompt(const ModelSource& source, int64_t vocab_size, ResultRow& row) {
  Prompt prompt;
  if (source.synthetic()) {
    prompt.ids = synthetic_prompt_ids(kCheckPrompt, vocab_size);
    std::string ids;
    for (int32_t id : prompt.ids) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    row.prompt = "token ids [" + ids + "]: the bytes of \"" + kCheckPrompt +
                 "\" modulo the vocabulary size (synthetic weights have no tokenizer)";
  } else {
    prompt.tokenizer = Tokenizer::from_file((std::filesystem::path(source.dir) / "tokenizer.json").string());
    prompt.ids = prompt.tokenizer->encode(kCheckPrompt).ids;
  }
  return prompt;
}

// The tested run: the checkpoint on the cpu backend, compiled for the prompt and kCheckNewTokens
// (or its plan loaded from the plan cache). Its model and plan are freed on return, before the
// reference loads.
GenerationTrace run_tested(const ModelSource& source, const CheckOptions& options, Prompt& prompt, ResultRow& row,
                           CheckStage& stage) {
  const auto load_start = Clock::now();
  LoadedModel loaded = load_model(source.dir, Backend::kCpu, single_process_communicator(), /*populate_weights=*/false);
  prompt = check_prompt(source, loaded.model->spec().vocab_size, row);
  row.load_time_s = seconds_since(load_start);

  stage = CheckStage::kCompile;
  CompileOptions compile;
  compile.cache_dir = options.cache_dir;
  compile.use_cache = options.plan_cache;
  const std::unique_ptr<CompiledModel> compiled = compile_loaded(loaded, compile);
  const CompiledModel::Shape shape = compiled->prepare(static_cast<int64_t>(prompt.ids.size()), kCheckNewTokens);
  const CompileStats& stats = compiled->stats();
  row.compile_time_s = stats.seconds;
  row.recompilations = static_cast<int32_t>(stats.recompilations);
  if (options.plan_cache) row.plan_cache_hit = stats.compilations == 0;
  row.peak_activation_bytes = stats.peak_activation_bytes;

  stage = CheckStage::kGenerate;
  inject_fault_if_requested(row.model_id);
  return generate_traced(*loaded.model, prompt.ids, kCheckNewTokens, loaded.generation.eos_token_ids,
                         shape.cache_capacity);
}

// The reference run: the same checkpoint on the ref backend (f32, never compiled).
GenerationTrace run_reference(const ModelSource& source, const Prompt& prompt, CheckStage& stage) {
  stage = CheckStage::kLoad;
  const LoadedModel loaded = load_model(source.dir, Backend::kRef);
  stage = CheckStage::kGenerate;
  return generate_traced(*loaded.model, prompt.ids, kCheckNewTokens, loaded.generation.eos_token_ids);
}

// The protocol after resolution; `stage` tells the caller where an exception came from.
void run_protocol(const ModelSource& source, const CheckOptions& options, const DeviceProfile& profile, ResultRow& row,
                  CheckStage& stage) {
  namespace fs = std::filesystem;
  const Json config = source.synthetic()
                          ? source.synthetic_config
                          : read_json_file((fs::path(source.dir) / "config.json").string(), ErrorKind::kCheckpoint);
  row.architecture = ConfigReader(config, "config.json").string("model_type", std::nullopt);
  find_architecture(row.architecture);  // an unknown family ends here, before any planning or weights

  const ModelShape shape = model_shape(config, source.entry ? published_parameters(*source.entry) : std::nullopt);
  row.parameter_count = shape.parameters;
  // The two runs come one after the other, so the peak is the larger one. The ref reference keeps
  // weights, KV cache and activations in f32 (4 bytes a parameter); compiling a bf16 checkpoint
  // (every synthetic one) holds it and its packed copy, 2 + 2 bytes. Compiling an f32 checkpoint
  // holds 4 + 4 bytes a parameter while packing, which this f32 plan does not count.
  PlannerOptions planner;
  planner.weight_dtype = DType::kF32;
  planner.kv_dtype = DType::kF32;
  const CorePlan plan = plan_cores(shape, profile, planner);
  if (plan.fits()) {
    row.cores = static_cast<int32_t>(plan.cores);
    row.tp_degree = static_cast<int32_t>(plan.tp_degree);
    row.ep_degree = static_cast<int32_t>(plan.ep_degree);
  }
  if (!plan.fits() || plan.cores > 1) {
    const std::string why = plan.fits() ? "needs " + std::to_string(plan.cores) + " cores of " + profile.name +
                                              "; the lab's check runs one process (`canrun generate --cores N` runs it sharded)"
                                        : plan.reason + " of " + profile.name;
    fail_row(row, Status::kNotTested, "not_tested", why + " (" + plan.detail + ")");
    return;
  }

  if (source.synthetic()) make_synthetic_checkpoint(config, kSyntheticSeed, source.dir);
  Prompt prompt;
  const GenerationTrace tested = run_tested(source, options, prompt, row, stage);
  const GenerationTrace reference = run_reference(source, prompt, stage);
  const Verdict verdict = compare_generations(tested, reference);
  row.generated_token_ids = tested.tokens;
  row.reference_token_ids = reference.tokens;
  row.matching_prefix_length = verdict.matching_prefix_length;
  if (prompt.tokenizer) row.generated_text = prompt.tokenizer->decode(tested.tokens);
  row.result = status_name(verdict.status);
  if (verdict.status != Status::kPass) {
    row.error_type = verdict.status == Status::kFailMismatch ? std::optional<std::string>("mismatch") : std::nullopt;
    row.error_message = verdict.detail;
  }
}

}  // namespace

std::vector<int32_t> synthetic_prompt_ids(std::string_view prompt, int64_t vocab_size) {
  if (vocab_size <= 0) fail(ErrorKind::kUsage, "synthetic prompt: vocab_size must be positive");
  std::vector<int32_t> ids;
  for (unsigned char byte : prompt) ids.push_back(static_cast<int32_t>(byte % vocab_size));
  return ids;
}

ResultRow initial_row(const ModelSource& source, const CheckOptions& options, const std::string& expected_result) {
  ResultRow row;
  row.model_id = source.model_id;
  row.revision = source.revision;
  row.task = source.entry ? source.entry->task : "text-generation";
  row.architecture = source.entry ? source.entry->model_type : "";
  if (source.entry) row.parameter_count = published_parameters(*source.entry);
  row.weights = source.weights();
  row.result = expected_result;
  row.prompt = kCheckPrompt;
  row.software_stack = software_stack();
  const VersionPair pair = engine_version_pair();
  row.compiler_version = pair.compiler;
  row.library_version = pair.library;
  row.host = host_name();
  row.timestamp = std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
  row.reproduce_script = script_for(source, options, expected_result);
  return row;
}

ResultRow run_check(const CheckOptions& options) {
  const auto start = Clock::now();
  if (!options.plan_cache && !options.cache_dir.empty())
    fail(ErrorKind::kUsage, "--cache-dir has no effect with --no-plan-cache");
  const DeviceProfile profile = find_profile(available_profiles(options.profiles_file), options.profile);
  const std::vector<CatalogEntry> catalog =
      load_catalog(options.catalog.empty() ? default_catalog_path() : options.catalog);
  const ModelSource source = resolve_model(options.model, options.synthetic, catalog);
  ResultRow row = initial_row(source, options, "");
  CheckStage stage = CheckStage::kLoad;
  try {
    run_protocol(source, options, profile, row, stage);
  } catch (const std::bad_alloc&) {
    fail_row(row, Status::kOom, "std::bad_alloc", "an allocation failed (out of memory)");
  } catch (const Error& e) {
    fail_row(row, status_for_error(stage, e.kind()), std::string(error_kind_name(e.kind())), e.what());
  } catch (const std::exception& e) {
    fail_row(row, status_for_error(stage, ErrorKind::kRuntime), "std::exception", e.what());
  }
  row.wall_time_s = seconds_since(start);
  row.peak_host_memory_bytes = peak_resident_bytes();
  // The reproduce script names the result it expects, known only now.
  row.reproduce_script = script_for(source, options, row.result);
  return row;
}

}  // namespace canrun
