#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "blocks/decoder_program.h"
#include "kernels/top_k.h"
#include "parallel/shard_layout.h"
#include "program/checkpoint_loader.h"
#include "util/error.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// True when running one more token at `position` must recompute the whole sequence, as
// transformers does when longrope switches from its short to its long factors (phi3): it drops
// the cache when the sequence first grows past the pretraining length, so every earlier key is
// rotated again with the long factors.
bool recompute_before(const DecoderSpec& spec, int64_t position) {
  return spec.longrope_recompute && spec.rotary && spec.rope.type == "longrope" &&
         position == spec.rope.original_max_positions;
}

}  // namespace

SessionOptions uncompiled(Backend backend, std::shared_ptr<Communicator> comm) {
  SessionOptions options;
  options.backend = backend;
  options.compile.reset();
  options.comm = std::move(comm);
  return options;
}

Session::Session(std::string model_dir, SessionOptions options)
    : model_dir_(std::move(model_dir)), options_(std::move(options)) {
  const auto start = Clock::now();
  if (options_.backend == Backend::kRef) options_.compile.reset();  // the yardstick runs as loaded
  if (options_.on_phase) options_.on_phase(SessionPhase::kLoad);
  config_ = read_model_config(model_dir_);
  const DecoderSpec& spec = config_.spec;
  check_shardable(spec, options_.comm->size());
  // A compiled model reads its weights page by page while packing them, or not at all when the
  // plan cache has them packed already.
  store_ = std::make_unique<WeightStore>(WeightStore::open_folder(model_dir_, /*populate=*/!options_.compile));
  stored_dtype_ = store_->stored_dtype();
  CheckpointLoader loader(*store_, spec.conv1d, spec.fp8, /*keep_stored=*/options_.backend == Backend::kCpu);
  program_ = build_decoder_program(spec, options_.comm->shard(), loader);
  load_seconds_ = seconds_since(start);
  executor_ = std::make_unique<Executor>(program_, kernels_for(options_.backend), *options_.comm);
  if (options_.compile) {
    if (options_.on_phase) options_.on_phase(SessionPhase::kCompile);
    compiled_ = std::make_unique<CompiledModel>(program_, spec.max_positions, model_dir_, options_.comm->shard(),
                                                *options_.compile, store_.get());
    store_->drop_resident_pages();  // the packed copies replace the checkpoint's matrices
  } else {
    decode_plan_.buffers = plan_buffers(program_, 1);
  }
}

CompiledModel::Shape Session::prepare(int64_t prompt_length, int64_t new_tokens) {
  if (!compiled_) return {prompt_length, prompt_length + new_tokens};
  const std::lock_guard lock(compile_mutex_);
  return compiled_->prepare(prompt_length, new_tokens).shape;
}

GenerationResult Session::generate(std::span<const int32_t> prompt, const GenerateRequest& request) {
  const DecoderSpec& spec = config_.spec;
  const int64_t prompt_length = static_cast<int64_t>(prompt.size());
  const int64_t new_tokens = request.max_new_tokens;
  if (prompt_length == 0) fail(ErrorKind::kUsage, "the prompt has no tokens");
  if (new_tokens < 0) fail(ErrorKind::kUsage, "--max-new-tokens must not be negative");
  const int64_t needed = prompt_length + new_tokens;
  const std::string request_text = "prompt of " + std::to_string(prompt_length) + " tokens plus --max-new-tokens " +
                                   std::to_string(new_tokens);
  if (needed > spec.max_positions)
    fail(ErrorKind::kUsage, request_text + " exceeds the model's max_position_embeddings of " +
                                std::to_string(spec.max_positions));

  // The plans: the compiled shape's, or derived from the program for this prompt.
  ExecutionPlan derived_prefill;
  const ExecutionPlan* prefill = &derived_prefill;
  const ExecutionPlan* decode = &decode_plan_;
  int64_t capacity = needed;
  if (compiled_) {
    const std::lock_guard lock(compile_mutex_);
    const CompiledModel::Plans& plans = compiled_->prepare(prompt_length, new_tokens);
    prefill = &plans.prefill;
    decode = &plans.decode;
    capacity = plans.shape.cache_capacity;
  } else {
    derived_prefill.buffers = plan_buffers(program_, prompt_length);
  }
  if (request.cache_capacity > 0) capacity = request.cache_capacity;
  if (needed > capacity)
    fail(ErrorKind::kUsage, request_text + " needs " + std::to_string(needed) + " positions, more than the KV cache of " +
                                std::to_string(capacity) + " (--cache-tokens)");

  GenerationResult result;
  SequenceState state = program_.make_state({capacity, request.kv_dtype});
  result.kv_cache_bytes = state.bytes();
  Arena arena;
  const std::vector<int32_t>& eos = request.eos_token_ids ? *request.eos_token_ids : config_.generation.eos_token_ids;
  Sampler sampler(request.sampling);
  result.seed = sampler.seed();
  std::vector<int32_t> ids(prompt.begin(), prompt.end());  // the prompt and every chosen token
  // Rank 0 chooses and every rank continues with its choice, so the ranks of a sharded run
  // never diverge (their samplers' seeds may differ).
  const auto choose = [&](std::span<const float> logits) {
    if (request.top_ids > 0) result.top_ids.push_back(top_k_indices(logits, request.top_ids));
    int32_t next = sampler.next(logits, ids);
    options_.comm->broadcast(&next, 1, 0);
    ids.push_back(next);
    return next;
  };

  const auto prefill_start = Clock::now();
  result.prompt_logits = executor_->run(prompt, 0, *prefill, state, arena, request.prefill_observer);
  result.prefill_seconds = seconds_since(prefill_start);
  if (new_tokens > 0) {
    const auto decode_start = Clock::now();
    int32_t next = choose(result.prompt_logits);
    for (int64_t step = 0;; ++step) {
      result.tokens.push_back(next);
      if (request.on_token) request.on_token(next);
      if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
        result.stopped_at_eos = true;
        break;
      }
      if (static_cast<int64_t>(result.tokens.size()) == new_tokens) break;
      if (request.should_stop && request.should_stop()) break;
      const int64_t position = prompt_length + step;
      std::vector<float> logits;
      if (recompute_before(spec, position)) {
        ExecutionPlan whole{plan_buffers(program_, static_cast<int64_t>(ids.size())), prefill->choices};
        logits = executor_->run(ids, 0, whole, state, arena);
      } else {
        logits = executor_->run({&next, 1}, position, *decode, state, arena);
      }
      next = choose(logits);
    }
    result.decode_seconds = seconds_since(decode_start);
  }
  result.activation_bytes = arena.bytes();
  return result;
}

}  // namespace canrun
