#include "lab/tested_run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "runtime/model_config.h"
#include "runtime/session.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

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

CheckPrompt check_prompt(const ModelSource& source, int64_t vocab_size) {
  CheckPrompt prompt;
  prompt.description = kCheckPrompt;
  if (source.synthetic()) {
    prompt.ids = synthetic_prompt_ids(kCheckPrompt, vocab_size);
    std::string ids;
    for (int32_t id : prompt.ids) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    prompt.description = "token ids [" + ids + "]: the bytes of \"" + kCheckPrompt +
                         "\" modulo the vocabulary size (synthetic weights have no tokenizer)";
  } else {
    prompt.tokenizer = Tokenizer::from_file((std::filesystem::path(source.dir) / "tokenizer.json").string());
    prompt.ids = prompt.tokenizer->encode(kCheckPrompt).ids;
  }
  return prompt;
}

Json tested_run_to_json(const TestedRun& run) {
  return Json{{"tokens", run.trace.tokens},
              {"top_ids", run.trace.top_ids},
              {"load_time_s", or_null(run.load_time_s)},
              {"compile_time_s", or_null(run.compile_time_s)},
              {"recompilations", or_null(run.recompilations)},
              {"plan_cache_hit", or_null(run.plan_cache_hit)},
              {"peak_activation_bytes", or_null(run.peak_activation_bytes)}};
}

TestedRun tested_run_from_json(const Json& json) {
  TestedRun run;
  run.trace.tokens = field<std::vector<int32_t>>(json, "tokens");
  run.trace.top_ids = field<std::vector<std::vector<int32_t>>>(json, "top_ids");
  run.load_time_s = optional_field<double>(json, "load_time_s");
  run.compile_time_s = optional_field<double>(json, "compile_time_s");
  run.recompilations = optional_field<int32_t>(json, "recompilations");
  run.plan_cache_hit = optional_field<bool>(json, "plan_cache_hit");
  run.peak_activation_bytes = optional_field<int64_t>(json, "peak_activation_bytes");
  return run;
}

void run_tested(const ModelSource& source, const CheckOptions& options, std::shared_ptr<Communicator> comm,
                TestedRun& run, CheckStage& stage) {
  const auto load_start = Clock::now();
  SessionOptions open;
  open.backend = Backend::kCpu;
  open.compile = CompileOptions{};
  open.compile->cache_dir = options.cache_dir;
  open.compile->use_cache = options.plan_cache;
  open.comm = std::move(comm);
  open.on_phase = [&](SessionPhase phase) {
    stage = phase == SessionPhase::kLoad ? CheckStage::kLoad : CheckStage::kCompile;
    if (phase == SessionPhase::kCompile) run.load_time_s = seconds_since(load_start);
  };
  // The tokenizer is read first: a bad tokenizer.json is a load failure, not a compile failure.
  const CheckPrompt prompt = check_prompt(source, read_model_spec(source.dir).vocab_size);
  Session session(source.dir, open);
  session.prepare(static_cast<int64_t>(prompt.ids.size()), kCheckNewTokens);
  const CompileStats& stats = session.compiled()->stats();
  run.compile_time_s = stats.seconds;
  run.recompilations = static_cast<int32_t>(stats.recompilations);
  if (options.plan_cache) run.plan_cache_hit = stats.compilations == 0;
  run.peak_activation_bytes = stats.peak_activation_bytes;

  stage = CheckStage::kGenerate;
  inject_fault_if_requested(source.model_id);
  GenerateRequest request;
  request.max_new_tokens = kCheckNewTokens;
  request.top_ids = kTopK;
  const GenerationResult result = session.generate(prompt.ids, request);
  run.trace = {result.tokens, result.top_ids};
}

}  // namespace canrun
