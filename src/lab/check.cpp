#include "lab/check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "checkpoint/config_reader.h"
#include "checkpoint/safetensors.h"
#include "lab/encoder_check.h"
#include "lab/judge.h"
#include "lab/planner.h"
#include "lab/reproduce.h"
#include "lab/sharded_check.h"
#include "lab/software_stack.h"
#include "lab/status.h"
#include "lab/synthetic_weights.h"
#include "lab/tested_run.h"
#include "lab/torch_check.h"
#include "lab/training_check.h"
#include "lab/verify.h"
#include "models/registry.h"
#include "runtime/model_config.h"
#include "runtime/session.h"
#include "util/process_stats.h"
#include "util/stopwatch.h"

namespace canrun {

std::vector<std::string> check_arguments(const ModelSource& source, const CheckOptions& options) {
  std::vector<std::string> args = {source.argument};
  if (source.model_id != source.argument) args.insert(args.end(), {"--model-id", source.model_id});
  if (source.synthetic()) args.push_back("--synthetic");
  args.insert(args.end(), {"--profile", options.profile});
  if (!options.profiles_file.empty()) args.insert(args.end(), {"--profiles", options.profiles_file});
  if (!options.catalog.empty()) args.insert(args.end(), {"--catalog", options.catalog});
  return args;
}

namespace {

using Clock = std::chrono::steady_clock;

WeightsOrigin origin_of(const ModelSource& source) {
  if (source.synthetic()) return WeightsOrigin::kSynthetic;
  if (source.unavailable()) return WeightsOrigin::kUnavailable;
  return source.kind == "local folder" ? WeightsOrigin::kLocalFolder : WeightsOrigin::kHub;
}

std::string repeat_arguments(const ModelSource& source, const CheckOptions& options);

std::string script_for(const ModelSource& source, const CheckOptions& options, const ResultRow& row,
                       const std::string& expected_result) {
  const VersionPair pair = check_version_pair(options);
  ReproduceInputs inputs;
  inputs.model_id = source.model_id;
  inputs.weights = source.weights();
  inputs.revision = source.revision.value_or("");
  inputs.origin = origin_of(source);
  inputs.expected_result = expected_result;
  inputs.version_pair = pair.compiler + " / " + pair.library;
  inputs.host = host_name();
  if (inputs.origin == WeightsOrigin::kLocalFolder) {
    inputs.folder = source.dir;
    inputs.folder_source = folder_source_command(source.dir);
  }
  if (source.synthetic()) inputs.folder = source.dir;
  if (options.runner == Runner::kTorch) {
    TorchReproduceInputs torch;
    torch.run_py = options.workload == Workload::kTrain
                       ? torch_train_script(source.dir, options.torch, options.train)
                       : torch_run_script({source.dir, options.torch, row.cores.value_or(1), row.task});
    torch.packages = torch_requirements(probe_torch_stack(options.torch.python));
    torch.expected_tokens = row.generated_token_ids;
    torch.encoder_protocol = encoder_protocol(row.task);
    torch.min_cosine = torch_dtype(options.torch) == "float32" ? kMinCosineF32 : kMinCosineBf16;
    torch.expected_losses = row.train_losses;
    if (options.workload == Workload::kTrain) torch.loss_tolerance = loss_tolerance(options.train.dtype).later;
    // A run.py failure's message starts with its stage ("device: ..."); other failures have none.
    const std::string stage = row.error_message ? row.error_message->substr(0, row.error_message->find(':')) : "";
    for (const char* known : {"import", "device", "load", "prompt", "compile", "generate", "reference", "data",
                              "forward", "backward", "optimizer", "checkpoint", "restart"})
      if (!row.generated_token_ids && !row.train_losses && stage == known) torch.expected_error = stage;
    return torch_reproduce_script(inputs, torch);
  }
  inputs.check_arguments = repeat_arguments(source, options);
  return reproduce_script(inputs);
}

// check_arguments as one shell line, naming the snapshot the row checked, not whatever the
// branch names by then.
std::string repeat_arguments(const ModelSource& source, const CheckOptions& options) {
  std::vector<std::string> args = check_arguments(source, options);
  if (origin_of(source) == WeightsOrigin::kHub && source.revision) args[0] = source.model_id + "@" + *source.revision;
  std::string line;
  for (const std::string& arg : args) line += (line.empty() ? "" : " ") + shell_quote(arg);
  return line;
}

// The command a row shows for running it yourself, from a clone built with the README's set-up.
std::string run_command(const ModelSource& source, const CheckOptions& options) {
  std::string line = "build/canrun check " + repeat_arguments(source, options);
  if (options.runner == Runner::kTorch)
    line += " --runner torch --device " + shell_quote(options.torch.device) + " --compile " +
            shell_quote(options.torch.compile);
  if (options.workload == Workload::kTrain)
    for (const std::string& arg : training_arguments(options.train)) line += " " + shell_quote(arg);
  return line;
}

void fail_row(ResultRow& row, Status status, const std::string& type, const std::string& message) {
  row.result = status_name(status);
  row.error_type = type;
  row.error_message = message;
}

// The reference run: the same checkpoint on the ref backend (f32, never compiled, one process).
GenerationTrace run_reference(const ModelSource& source, const CheckOptions& options, CheckPrompt& prompt,
                              CheckStage& stage) {
  stage = CheckStage::kLoad;
  report_check_step(options, "reference run (ref): loading");
  Session session(source.dir, uncompiled(Backend::kRef));
  prompt = check_prompt(source, session.spec());
  stage = CheckStage::kGenerate;
  report_check_step(options, "reference run (ref): generating " + std::to_string(kCheckNewTokens) + " tokens");
  GenerateRequest request;
  request.max_new_tokens = kCheckNewTokens;
  request.top_ids = kTopK;
  request.visual = check_visual_inputs(session, prompt);
  const GenerationResult result = session.generate(prompt.ids, request);
  return {result.tokens, result.top_ids};
}

// The check process's own memory besides the model's: a check of any tiny test fixture peaks at
// 37-39 MiB (code, libraries, tokenizer, catalog).
constexpr int64_t kCheckProcessBytes = int64_t{40} << 20;

// What the planner sizes. canrun's tested run and its reference hold the weights as the
// checkpoint stores them (bf16 and FP8 as they are; f16 and f32 as f32), a KV cache and
// activations in f32; they run one after the other, so the larger of the two must fit, and with
// the same weights and state they hold alike. An embedding table stored as held is looked up
// in the mapping, so of it only the check's tokens' rows come in. (A sharded tested run is sized
// per worker; its reference runs in one process on the host.) The torch runner's runs are
// float32 throughout.
PlannerOptions check_planner_options(const ModelSource& source, const CheckOptions& options) {
  PlannerOptions planner;
  planner.kv_dtype = DType::kF32;
  planner.overhead_bytes = kCheckProcessBytes;
  if (options.runner == Runner::kTorch) {
    planner.weight_dtype = DType::kF32;
    return planner;
  }
  const DType stored = source.synthetic() ? DType::kBF16 : WeightStore::open_folder(source.dir, false).stored_dtype();
  planner.weight_dtype = stored == DType::kBF16 || stored == DType::kF8E4M3 ? DType::kBF16 : DType::kF32;
  planner.tables_in_place = stored != DType::kF16;
  return planner;
}

// The quantization column: how the checkpoint stores its weights, when not as floats.
std::optional<std::string> quantization_label(const DecoderSpec& spec) {
  if (spec.packed_int.present()) {
    const std::string bits = std::to_string(spec.packed_int.bits);
    return std::string(spec.packed_int.packing == IntPacking::kGptq ? "gptq" : "compressed-tensors") + " int" + bits +
           " (W" + bits + "A16), " +
           (spec.packed_int.group_size > 0 ? "group " + std::to_string(spec.packed_int.group_size) : "per channel");
  }
  if (spec.fp8.present())
    return "fp8 e4m3, blocks " + std::to_string(spec.fp8.rows) + "x" + std::to_string(spec.fp8.cols);
  if (spec.moe.mxfp4) return "mxfp4 experts";
  return std::nullopt;
}

// The protocol after resolution; `stage` tells the caller where an exception came from.
void run_protocol(const ModelSource& source, const CheckOptions& options, const DeviceProfile& profile, ResultRow& row,
                  CheckStage& stage) {
  namespace fs = std::filesystem;
  const Json config = source.synthetic()
                          ? source.synthetic_config
                          : read_json_file((fs::path(source.dir) / "config.json").string(), ErrorKind::kCheckpoint);
  row.architecture = ConfigReader(config, "config.json").string("model_type", std::nullopt);
  // An unknown family ends here, before any planning or weights.
  const Architecture& architecture = architecture_of(ConfigReader(config, "config.json"));
  const DecoderSpec spec = architecture.read_spec(ConfigReader(config, "config.json"));
  row.quantization = quantization_label(spec);
  // A model that reads images is checked on the image-text-to-text task, with the check image.
  if (spec.vision) row.task = "image-text-to-text";
  // An encoder is checked on its catalog task, else on the one its head says (encoder_check.h).
  // A sentence-transformers folder runs any family's model as an encoder (Qwen3-Embedding's
  // qwen3), and so does an embedding task's synthetic folder, which gets those files.
  const bool embedding_task = row.task == "sentence-similarity" || row.task == "feature-extraction";
  const bool encoder = spec.output == ModelOutput::kHiddenStates ||
                       (source.synthetic() ? embedding_task : fs::exists(fs::path(source.dir) / "modules.json"));
  if (encoder && !is_encoder_task(row.task)) row.task = encoder_task_of(config);
  if (encoder && encoder_protocol(row.task).empty()) {
    row.reason_code = "no_protocol";
    fail_row(row, Status::kNotTested, "not_tested", "the lab has no check protocol for " + row.task + " yet");
    return;
  }
  if (options.workload == Workload::kTrain && row.task != "text-generation") {
    row.reason_code = "no_protocol";
    fail_row(row, Status::kNotTested, "not_tested", "the lab has no training check for " + row.task + " yet");
    return;
  }

  // An encoder's run reads no LM head (a causal LM's family in a sentence-transformers folder
  // included): the planner counts the tensors of the base model it holds.
  DecoderSpec planned = spec;
  if (encoder) planned.output = ModelOutput::kHiddenStates;
  const ModelShape shape = shape_from_spec(planned);
  row.parameter_count = shape.parameters;
  PlannerOptions planner = check_planner_options(source, options);
  if (options.workload == Workload::kTrain) {
    // Full fine-tuning adds a gradient and AdamW's two moments in f32 per weight; one micro-batch
    // runs at a time (the activations the backward pass keeps per layer are not counted).
    if (!options.train.lora) planner.overhead_bytes += 3 * int64_t{4} * shape.parameters;
    planner.prompt_tokens = int64_t{options.train.batch_size} * options.train.sequence_length;
    planner.new_tokens = 0;
  }
  const CorePlan plan = plan_cores(shape, profile, planner);
  row.planned_memory_bytes = plan.per_core_bytes;
  if (!plan.fits()) {
    row.memory_capacity_bytes = profile.memory_per_core_bytes * plan.largest_cores_tried;
    row.reason_code = plan.reason_code;
    fail_row(row, Status::kNotTested, "not_tested", plan.reason + " of " + profile.name + " (" + plan.detail + ")");
    return;
  }
  if (options.workload == Workload::kTrain && plan.cores > 1) {
    row.reason_code = "needs_sharding";
    fail_row(row, Status::kNotTested, "not_tested",
             "the training check runs in one process, and the planner puts this model on " +
                 std::to_string(plan.cores) + " cores of " + profile.name);
    return;
  }
  row.cores = static_cast<int32_t>(plan.cores);
  row.tp_degree = static_cast<int32_t>(plan.tp_degree);
  row.ep_degree = static_cast<int32_t>(plan.ep_degree);
  row.memory_capacity_bytes = profile.memory_per_core_bytes * plan.cores;

  if (source.synthetic()) {
    report_check_step(options, "making synthetic weights");
    make_synthetic_checkpoint(config, kSyntheticSeed, source.dir);
    if (encoder)
      write_synthetic_encoder_files(source.dir, config, source.entry ? source.entry->sentence_transformers : Json(),
                                    row.task);
  }
  if (encoder && options.runner == Runner::kCanrun) {
    const bool bf16 = source.synthetic() || WeightStore::open_folder(source.dir, false).stored_dtype() == DType::kBF16;
    run_encoder_check(source, options, bf16, row, stage);
    return;
  }
  if (options.workload == Workload::kTrain) {
    stage = CheckStage::kGenerate;
    run_training_check(source, options, row);
    return;
  }
  // What the runs are asked, where it is not the fixed prompt as it stands (the canrun runner
  // records it again from its reference run).
  if (encoder) row.prompt = encoder_check_prompt(row.task, source.synthetic());
  else if (source.synthetic() || row.task == "image-text-to-text")
    row.prompt = check_prompt(source, read_model_spec(source.dir)).description;
  if (options.runner == Runner::kTorch) {
    stage = CheckStage::kGenerate;
    report_check_step(options, "torch runner: the tested and the reference run");
    run_torch_check(source, options, static_cast<int>(plan.cores), row);
    return;
  }
  TestedRun tested;
  std::optional<CheckFailure> failure;
  if (plan.cores == 1) {
    try {
      run_tested(source, options, single_process_communicator(), tested, stage);
    } catch (...) {
      failure = current_failure(stage);
    }
  } else {
    report_check_step(options, "tested run (cpu): " + std::to_string(plan.cores) + " workers");
    ShardedTestedRun sharded = run_tested_sharded(source, options, static_cast<int>(plan.cores));
    tested = std::move(sharded.run);
    row.peak_host_memory_bytes = sharded.peak_worker_bytes;
    failure = std::move(sharded.failure);
  }
  record_tested_run(tested, row);  // what the tested run measured before any failure is kept
  if (failure) {
    fail_row(row, failure->status, failure->type, failure->message);
    return;
  }
  CheckPrompt prompt;
  const GenerationTrace reference = run_reference(source, options, prompt, stage);
  row.prompt = prompt.description;
  record_verdict(tested.trace, reference, row);
  if (prompt.tokenizer) row.generated_text = prompt.tokenizer->decode(tested.trace.tokens);
  if (plan.cores > 1) judge_mismatch(row);  // sharded: its sums add up in another order
}

}  // namespace

VersionPair check_version_pair(const CheckOptions& options) {
  if (options.runner == Runner::kCanrun) return engine_version_pair();
  return torch_version_pair(probe_torch_stack(options.torch.python), options.torch);
}

void record_verdict(const GenerationTrace& tested, const GenerationTrace& reference, ResultRow& row) {
  const Verdict verdict = compare_generations(tested, reference);
  row.generated_token_ids = tested.tokens;
  row.reference_token_ids = reference.tokens;
  row.matching_prefix_length = verdict.matching_prefix_length;
  row.verification = verification_of(verdict);
  row.tokens_match = tested.tokens == reference.tokens;
  if (!*row.tokens_match) row.first_divergence_step = verdict.matching_prefix_length;
  row.result = status_name(verdict.status);
  if (verdict.status != Status::kPass) {
    row.error_type = verdict.status == Status::kFailMismatch ? std::optional<std::string>("mismatch") : std::nullopt;
    row.error_message = verdict.detail;
  }
}

void judge_mismatch(ResultRow& row) {
  if (row.result != status_name(Status::kFailMismatch) || row.weights != "real" || !row.generated_text) return;
  // The judge scores continuations of the fixed text prompt, and its threshold was calibrated on those.
  if (row.task == "image-text-to-text") return;
  try {
    Judge judge(default_judge_model_dir());
    const double score = judge.score(kCheckPrompt, *row.generated_text);
    row.judge_score = score;
    row.judge = judge_description();
    row.verification = "judge";
    const bool fluent = score >= kJudgeThreshold;
    row.judged_fluent = fluent;
    row.result = status_name(fluent ? Status::kPassJudge : Status::kFailJudge);
    row.error_type = fluent ? std::nullopt : std::optional<std::string>("judge");
    char said[96];
    std::snprintf(said, sizeof(said), "; the judge scores the text %.3f (threshold %g)", score, kJudgeThreshold);
    row.error_message = row.error_message.value_or("") + said;
  } catch (const Error& error) {
    row.error_message = row.error_message.value_or("") + "; no judge ran: " + error.what();
  }
}

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
  if (source.entry && !source.entry->license.empty()) row.license = source.entry->license;
  row.run_command = run_command(source, options);
  if (!source.weights().empty()) row.weights = source.weights();
  row.result = expected_result;
  row.prompt = kCheckPrompt;
  row.workload = workload_name(options.workload);
  if (options.workload == Workload::kTrain)
    row.prompt = "fine-tuning on the " + std::to_string(training_examples().size()) +
                 " instruction examples of data/train_instructions.jsonl through the model's chat template";
  row.software_stack =
      options.runner == Runner::kCanrun ? software_stack()
      : options.workload == Workload::kTrain
          ? training_software_stack(probe_torch_stack(options.torch.python), options.torch, options.train)
          : torch_software_stack(probe_torch_stack(options.torch.python), options.torch);
  const VersionPair pair = check_version_pair(options);
  row.compiler_version = pair.compiler;
  row.library_version = pair.library;
  row.host = host_name();
  row.timestamp = std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
  row.reproduce_script = script_for(source, options, row, expected_result);
  return row;
}

void report_check_step(const CheckOptions& options, const std::string& step) {
  if (options.progress) options.progress(step, 0, 0);
}

ResultRow run_check(const CheckOptions& options) {
  const auto start = Clock::now();
  if (options.runner == Runner::kTorch) validate_torch_options(options.torch);
  validate_workload(options.workload, options.runner, options.train);
  if (!options.plan_cache && !options.cache_dir.empty())
    fail(ErrorKind::kUsage, "--cache-dir has no effect with --no-plan-cache");
  const DeviceProfile profile = find_profile(available_profiles(options.profiles_file), options.profile);
  const std::vector<CatalogEntry> catalog =
      load_catalog(options.catalog.empty() ? default_catalog_path() : options.catalog);
  report_check_step(options, "finding the model");
  const ModelSource source = resolve_model(options.model, options.synthetic ? WeightsPolicy::kSynthetic
                                                                            : WeightsPolicy::kReal,
                                           catalog, options.model_id);
  ResultRow row = initial_row(source, options, "");
  if (source.unavailable()) {
    // Nothing ran: no time or memory to record, and no weights to name.
    row.reason_code = "weights_unavailable";
    fail_row(row, Status::kNotTested, "weights_unavailable",
             source.unavailable_reason + (source.entry ? "; --synthetic checks it with synthetic weights made from "
                                                         "the catalog's config"
                                                       : ""));
    return row;
  }
  CheckStage stage = CheckStage::kLoad;
  try {
    run_protocol(source, options, profile, row, stage);
  } catch (...) {
    const CheckFailure failure = current_failure(stage);
    fail_row(row, failure.status, failure.type, failure.message);
  }
  const bool ran_nothing = row.result == status_name(Status::kUnsupportedArchitecture) ||
                           row.result == status_name(Status::kNotTested);
  if (ran_nothing) {
    // canrun cannot read the family, or the run does not fit: no time, memory or weights to record.
    if (row.result == status_name(Status::kUnsupportedArchitecture)) row.reason_code = "unsupported_architecture";
    row.weights.reset();
    row.reproduce_script = script_for(source, options, row, row.result);
    return row;
  }
  row.wall_time_s = seconds_since(start);
  // A sharded check's peak is its largest worker's, or the reference run's when that is larger.
  row.peak_host_memory_bytes = std::max(row.peak_host_memory_bytes.value_or(0), peak_resident_bytes());
  // The reproduce script names the result it expects, known only now.
  row.reproduce_script = script_for(source, options, row, row.result);
  return row;
}

}  // namespace canrun
