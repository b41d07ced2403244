#include "lab/tested_run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "chat/image_parts.h"
#include "runtime/model_config.h"
#include "runtime/session.h"
#include "util/stopwatch.h"
#include "util/temporary_directory.h"
#include "vision/multimodal_prompt.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

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

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

template <typename T>
T field(const Json& json, const char* name) {
  try {
    return json.at(name).get<T>();
  } catch (const Json::exception& e) {
    fail(ErrorKind::kRuntime, std::string("tested run: field '") + name + "': " + e.what());
  }
}

template <typename T>
std::optional<T> optional_field(const Json& json, const char* name) {
  if (!json.contains(name) || json.at(name).is_null()) return std::nullopt;
  return field<T>(json, name);
}

}  // namespace

RgbImage check_image() {
  RgbImage image(64, 48);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const bool square = x >= 20 && x < 36 && y >= 12 && y < 28;
      uint8_t* pixel = image.at(x, y);
      pixel[0] = square ? 250 : static_cast<uint8_t>(x * 4);
      pixel[1] = square ? 240 : static_cast<uint8_t>(y * 5);
      pixel[2] = square ? 30 : static_cast<uint8_t>(255 - x * 2 - y);
    }
  return image;
}

namespace {

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string text;
  for (int32_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

// The processor of a synthetic image-text-to-text checkpoint (it has no preprocessor_config.json):
// Qwen's, with the tower's patch sizes and transformers' default pixel bounds.
ImageProcessorConfig synthetic_processor(const VisionTowerSpec& tower) {
  ImageProcessorConfig config;
  config.source = "synthetic weights";
  config.class_name = "Qwen2VLImageProcessor";
  config.kind = ImageProcessorKind::kQwen2Vl;
  config.image_mean = {0.5f, 0.5f, 0.5f};
  config.image_std = {0.5f, 0.5f, 0.5f};
  config.patch_size = static_cast<int>(tower.patch_size);
  config.temporal_patch_size = static_cast<int>(tower.temporal_patch_size);
  config.merge_size = static_cast<int>(tower.merge_size);
  config.min_pixels = 56 * 56;
  config.max_pixels = 28 * 28 * 1280;
  return config;
}

}  // namespace

CheckPrompt check_prompt(const ModelSource& source, const DecoderSpec& spec) {
  CheckPrompt prompt;
  prompt.description = kCheckPrompt;
  const bool image = spec.vision.has_value();
  const std::string text = image ? kCheckInstruction : kCheckPrompt;
  if (image) {
    const ImageProcessorConfig processor =
        source.synthetic() ? synthetic_processor(*spec.vision) : read_image_processor_config(source.dir);
    prompt.pixels = preprocess_images(processor, {check_image()});
    const std::vector<int64_t> counts = image_token_counts(prompt.pixels->grid_thw, processor.merge_size);
    std::vector<int32_t> ids;
    if (source.synthetic()) {
      ids = synthetic_prompt_ids(text, spec.vocab_size);
      ids.insert(ids.begin(), spec.image_token_id);
    } else {
      Conversation conversation;
      conversation.messages.push_back(user_message_with_images(1, text));
      prompt.tokenizer = Tokenizer::from_file((std::filesystem::path(source.dir) / "tokenizer.json").string());
      ids = prompt.tokenizer->encode(ChatTemplate::from_model_dir(source.dir).render(conversation), false).ids;
    }
    prompt.ids = expand_image_placeholders(ids, spec.image_token_id, counts);
    prompt.description = std::string("the check image (64x48, canrun's) and \"") + text + "\" as a user turn" +
                         (source.synthetic() ? ": token ids of the image, then the bytes of the text modulo the "
                                               "vocabulary size (synthetic weights have no tokenizer)"
                                             : ", rendered with the chat template");
    return prompt;
  }
  if (source.synthetic()) {
    prompt.ids = synthetic_prompt_ids(kCheckPrompt, spec.vocab_size);
    prompt.description = "token ids [" + ids_text(prompt.ids) + "]: the bytes of \"" + kCheckPrompt +
                         "\" modulo the vocabulary size (synthetic weights have no tokenizer)";
  } else {
    prompt.tokenizer = Tokenizer::from_file((std::filesystem::path(source.dir) / "tokenizer.json").string());
    prompt.ids = prompt.tokenizer->encode(kCheckPrompt).ids;
  }
  return prompt;
}

std::shared_ptr<const VisualInputs> check_visual_inputs(const Session& session, const CheckPrompt& prompt) {
  return prompt.pixels ? session.encode_images(prompt.ids, *prompt.pixels) : nullptr;
}

Json tested_run_to_json(const TestedRun& run) {
  return Json{{"tokens", run.trace.tokens},
              {"top_ids", run.trace.top_ids},
              {"load_time_s", or_null(run.load_time_s)},
              {"compile_time_s", or_null(run.compile_time_s)},
              {"warm_compile_time_s", or_null(run.warm_compile_time_s)},
              {"recompilations", or_null(run.recompilations)},
              {"plan_cache_hit", or_null(run.plan_cache_hit)},
              {"plan_source", or_null(run.plan_source)},
              {"peak_activation_bytes", or_null(run.peak_activation_bytes)}};
}

TestedRun tested_run_from_json(const Json& json) {
  TestedRun run;
  run.trace.tokens = field<std::vector<int32_t>>(json, "tokens");
  run.trace.top_ids = field<std::vector<std::vector<int32_t>>>(json, "top_ids");
  run.load_time_s = optional_field<double>(json, "load_time_s");
  run.compile_time_s = optional_field<double>(json, "compile_time_s");
  run.warm_compile_time_s = optional_field<double>(json, "warm_compile_time_s");
  run.recompilations = optional_field<int32_t>(json, "recompilations");
  run.plan_cache_hit = optional_field<bool>(json, "plan_cache_hit");
  run.plan_source = optional_field<std::string>(json, "plan_source");
  run.peak_activation_bytes = optional_field<int64_t>(json, "peak_activation_bytes");
  return run;
}

SessionOptions tested_session_options(const std::string& cache_dir, std::shared_ptr<Communicator> comm) {
  SessionOptions open;
  open.backend = Backend::kCpu;
  open.compile = CompileOptions{};
  open.compile->cache_dir = cache_dir;
  open.compile->use_cache = true;
  open.comm = std::move(comm);
  return open;
}

SessionOptions tested_session_options(const std::string& cache_dir, const CheckOptions& options,
                                      std::shared_ptr<Communicator> comm, TestedRun& run, CheckStage& stage) {
  SessionOptions open = tested_session_options(cache_dir, std::move(comm));
  open.compile->progress = options.progress;
  open.on_phase = [&options, &run, &stage, load_start = Clock::now()](SessionPhase phase) {
    stage = phase == SessionPhase::kLoad ? CheckStage::kLoad : CheckStage::kCompile;
    report_check_step(options, phase == SessionPhase::kLoad ? "tested run (cpu): loading" : "tested run (cpu): compiling");
    if (phase == SessionPhase::kCompile) run.load_time_s = seconds_since(load_start);
  };
  return open;
}

void record_compile_stats(const Session& session, const CheckOptions& options, TestedRun& run) {
  const CompileStats& stats = session.compiled()->stats();
  run.compile_time_s = stats.seconds;
  run.recompilations = static_cast<int32_t>(stats.recompilations);
  if (options.plan_cache) run.plan_cache_hit = stats.compilations == 0;
  run.plan_source = stats.compilations > 0 ? "built" : stats.pulled_hits > 0 ? "remote_cache" : "local_cache";
  run.peak_activation_bytes = stats.peak_activation_bytes;
}

void record_tested_run(const TestedRun& run, ResultRow& row) {
  row.load_time_s = run.load_time_s;
  row.compile_time_s = run.compile_time_s;
  row.warm_compile_time_s = run.warm_compile_time_s;
  row.plan_source = run.plan_source;
  row.recompilations = run.recompilations;
  row.plan_cache_hit = run.plan_cache_hit;
  row.peak_activation_bytes = run.peak_activation_bytes;
}

void run_tested(const ModelSource& source, const CheckOptions& options, std::shared_ptr<Communicator> comm,
                TestedRun& run, CheckStage& stage) {
  // Without the plan cache the plan still goes to a cache, the check's own (nothing cached before
  // is read, and it is removed afterwards), so that a second session can time a warm start.
  std::optional<TemporaryDirectory> own_cache;
  if (!options.plan_cache) own_cache.emplace("canrun-check-plans-");
  const std::string cache_dir = own_cache ? own_cache->path().string() : options.cache_dir;
  // The tokenizer is read first: a bad tokenizer.json is a load failure, not a compile failure.
  const CheckPrompt prompt = check_prompt(source, read_model_spec(source.dir));
  {
    Session session(source.dir, tested_session_options(cache_dir, options, comm, run, stage));
    session.prepare(static_cast<int64_t>(prompt.ids.size()), kCheckNewTokens);
    record_compile_stats(session, options, run);

    stage = CheckStage::kGenerate;
    report_check_step(options, "tested run (cpu): generating " + std::to_string(kCheckNewTokens) + " tokens");
    inject_fault_if_requested(source.model_id);
    GenerateRequest request;
    request.max_new_tokens = kCheckNewTokens;
    request.top_ids = kTopK;
    request.visual = check_visual_inputs(session, prompt);
    const GenerationResult result = session.generate(prompt.ids, request);
    run.trace = {result.tokens, result.top_ids};
  }
  // A second session, the first one gone, takes the same plan from the cache: a warm start.
  stage = CheckStage::kCompile;
  report_check_step(options, "tested run (cpu): timing a warm start from the plan cache");
  Session again(source.dir, tested_session_options(cache_dir, std::move(comm)));
  again.prepare(static_cast<int64_t>(prompt.ids.size()), kCheckNewTokens);
  if (again.compiled()->stats().compilations == 0) run.warm_compile_time_s = again.compiled()->stats().seconds;
}

}  // namespace canrun
