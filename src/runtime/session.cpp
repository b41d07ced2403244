#include "runtime/session.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "blocks/decoder_program.h"
#include "kernels/top_k.h"
#include "models/stored_names.h"
#include "parallel/shard_layout.h"
#include "program/checkpoint_loader.h"
#include "runtime/prompt_lookup.h"
#include "util/error.h"
#include "util/stopwatch.h"
#include "vision/multimodal_prompt.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

// longrope as phi3 runs it: the rotary factors of a forward pass follow the sequence's length
// (short up to the pretraining length, long past it), so a prompt runs whole, never in pieces.
bool rotary_follows_length(const DecoderSpec& spec) {
  return spec.longrope_recompute && spec.rotary && spec.rope.type == "longrope";
}

// True when running one more token at `position` must recompute the whole sequence, as
// transformers does when longrope switches from its short to its long factors: it drops the
// cache when the sequence first grows past the pretraining length, so every earlier key is
// rotated again with the long factors.
bool recompute_before(const DecoderSpec& spec, int64_t position) {
  return rotary_follows_length(spec) && position == spec.rope.original_max_positions;
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
  // Weights are read page by page as they are used, never all at once: a compiled model reads
  // them while packing (or not at all when the plan cache has them packed), a worker of a
  // sharded run reads only its part, and the tensors cut or widened at load never stand resident
  // beside the copies made of them.
  store_ = std::make_unique<WeightStore>(WeightStore::open_folder(model_dir_, /*populate=*/false));
  stored_dtype_ = store_->stored_dtype();
  follow_stored_names(config_.spec, [this](const std::string& name) { return store_->contains(name); });
  CheckpointLoader loader(*store_, spec.conv1d, spec.fp8, spec.packed_int);
  program_ = build_decoder_program(spec, options_.comm->shard(), loader);
  if (spec.vision) vision_ = std::make_unique<QwenVisionEncoder>(*spec.vision, loader);
  load_seconds_ = seconds_since(start);
  executor_ = std::make_unique<Executor>(program_, kernels_for(options_.backend), *options_.comm);
  if (options_.compile) {
    if (options_.on_phase) options_.on_phase(SessionPhase::kCompile);
    compiled_ = std::make_unique<CompiledModel>(program_, spec.max_positions, model_dir_, options_.comm->shard(),
                                                *options_.compile, store_.get());
    // The packed copies replace the checkpoint's matrices: its mapped pages, and the copies made
    // at load (transposed, cut or widened), whose freed heap glibc keeps unless asked to return it.
    store_->drop_resident_pages();
    malloc_trim(0);
  } else {
    decode_plan_.buffers = plan_buffers(program_, 1);
    // Tensors copied out at load (transposed Conv1D weights, cut fused projections, widened f16)
    // are not needed in the mapping any more.
    store_->drop_resident_pages();
  }
}

void Session::check_prompt_lookup(const PromptLookup& lookup) const {
  const DecoderSpec& spec = config_.spec;
  if (lookup.draft_tokens < 0) fail(ErrorKind::kUsage, "--prompt-lookup must not be negative");
  if (lookup.draft_tokens == 0) return;
  if (lookup.max_ngram < 1) fail(ErrorKind::kUsage, "--prompt-lookup-ngram must be at least 1");
  if (encodes())
    fail(ErrorKind::kUsage, "--prompt-lookup: " + model_dir_ + " is an encoder; it generates no tokens to draft");
  const int folding = program_.make_state({1, DType::kF32}).first_folding_slot();
  if (folding >= 0)
    fail(ErrorKind::kUsage, "--prompt-lookup: " + spec.model_type + "'s " +
                                program_.state_slots()[static_cast<size_t>(folding)].name +
                                " folds every token into its state and cannot take rejected drafts back; "
                                "speculative decoding needs layers that keep a row per position (attention)");
  if (rotary_follows_length(spec))
    fail(ErrorKind::kUsage, "--prompt-lookup: " + spec.model_type +
                                "'s longrope recomputes the sequence as it grows; it runs one token per step");
}

CompiledModel::Shape Session::prepare(int64_t prompt_length, int64_t new_tokens) {
  if (!compiled_) return {prompt_length, prompt_length + new_tokens};
  const std::lock_guard lock(compile_mutex_);
  return compiled_->prepare(prompt_length, new_tokens).shape;
}

std::vector<float> Session::encode(std::span<const EncoderInput> inputs) {
  const DecoderSpec& spec = config_.spec;
  if (!encodes())
    fail(ErrorKind::kUsage, model_dir_ + ": " + spec.model_type + " generates text; it gives no embeddings");
  if (inputs.empty()) fail(ErrorKind::kUsage, "no inputs to encode");
  std::vector<int32_t> tokens;
  std::vector<int64_t> lengths;
  for (const EncoderInput& input : inputs) {
    const int64_t length = static_cast<int64_t>(input.ids.size());
    if (length == 0) fail(ErrorKind::kUsage, "an input has no tokens");
    if (length > spec.max_positions)
      fail(ErrorKind::kUsage, "an input of " + std::to_string(length) + " tokens exceeds the model's " +
                                  std::to_string(spec.max_positions) + " positions (max_position_embeddings)");
    if (!input.types.empty() && input.types.size() != input.ids.size())
      fail(ErrorKind::kUsage, "an input has " + std::to_string(input.types.size()) + " token types for " +
                                  std::to_string(length) + " tokens");
    tokens.insert(tokens.end(), input.ids.begin(), input.ids.end());
    lengths.push_back(length);
  }
  const int64_t total = static_cast<int64_t>(tokens.size()), count = static_cast<int64_t>(inputs.size());
  const ExecutionPlan* plan = nullptr;
  {
    const std::lock_guard lock(compile_mutex_);
    // Compiled: the bucket that holds every token, with its tuned choices; else buffers for exactly these.
    const CompiledModel::Plans* compiled = compiled_ ? &compiled_->prepare(total, 0) : nullptr;
    const int64_t rows = compiled ? compiled->shape.bucket : total;
    auto [it, made] = encode_plans_.try_emplace({rows, count});
    if (made) it->second = {plan_buffers(program_, rows, count), compiled ? compiled->prefill.choices : KernelChoices{}};
    plan = &it->second;
  }
  std::vector<SequenceState> states;
  std::vector<SequenceState*> state_pointers;
  states.reserve(inputs.size());
  for (const EncoderInput& input : inputs) {
    states.push_back(program_.make_state({static_cast<int64_t>(input.ids.size()), DType::kF32}));
    states.back().set_token_types({input.types.begin(), input.types.end()});
    state_pointers.push_back(&states.back());
  }
  const std::lock_guard lock(encode_mutex_);
  return executor_->run_sequences(tokens, lengths, state_pointers, *plan, encode_arena_);
}

SequenceRun::SequenceRun(Session& session, std::span<const int32_t> prompt, const GenerateRequest& request)
    : session_(session), request_(request), prompt_length_(static_cast<int64_t>(prompt.size())),
      ids_(prompt.begin(), prompt.end()), sampler_(request.sampling) {
  const DecoderSpec& spec = session.config_.spec;
  if (session.encodes())
    fail(ErrorKind::kUsage, session.model_dir_ + ": " + spec.model_type +
                                " is an encoder; it gives embeddings (canrun embed), not generated text");
  const int64_t new_tokens = request.max_new_tokens;
  if (prompt_length_ == 0) fail(ErrorKind::kUsage, "the prompt has no tokens");
  if (new_tokens < 0) fail(ErrorKind::kUsage, "--max-new-tokens must not be negative");
  const int64_t needed = prompt_length_ + new_tokens;
  const std::string request_text = "prompt of " + std::to_string(prompt_length_) + " tokens plus --max-new-tokens " +
                                   std::to_string(new_tokens);
  if (needed > spec.max_positions)
    fail(ErrorKind::kUsage, request_text + " exceeds the model's max_position_embeddings of " +
                                std::to_string(spec.max_positions));

  // The plans: the compiled shape's, or derived from the program for this prompt.
  prefill_ = &derived_prefill_;
  decode_ = &session.decode_plan_;
  int64_t capacity = needed;
  if (session.compiled_) {
    const std::lock_guard lock(session.compile_mutex_);
    const CompiledModel::Plans& plans = session.compiled_->prepare(prompt_length_, new_tokens);
    prefill_ = &plans.prefill;
    decode_ = &plans.decode;
    capacity = plans.shape.cache_capacity;
  } else {
    derived_prefill_.buffers = plan_buffers(session.program_, prompt_length_);
  }
  if (request.cache_capacity > 0) capacity = request.cache_capacity;
  if (needed > capacity)
    fail(ErrorKind::kUsage, request_text + " needs " + std::to_string(needed) + " positions, more than the KV cache of " +
                                std::to_string(capacity) + " (--cache-tokens)");

  state_.emplace(session.program_.make_state({capacity, request.kv_dtype}));
  if (request.visual) {
    if (!request.visual->image_positions.empty() && request.visual->image_positions.back() >= prompt_length_)
      fail(ErrorKind::kUsage,
           "the images' tokens lie past the prompt of " + std::to_string(prompt_length_) + " tokens");
    state_->set_visual(request.visual);
  }
  session.check_prompt_lookup(request.prompt_lookup);
  result_.kv_cache_bytes = state_->bytes();
  eos_ = request.eos_token_ids ? *request.eos_token_ids : session.config_.generation.eos_token_ids;
  result_.seed = sampler_.seed();
  if (request.prefill_chunk < 0) fail(ErrorKind::kUsage, "--prefill-chunk must not be negative");
  in_pieces_ = request.prefill_chunk > 0 && !rotary_follows_length(spec);
  if (!in_pieces_) prefill_piece();  // in pieces, every piece is a step's
}

void SequenceRun::prefill_piece() {
  const int64_t left = prompt_length_ - prefilled_;
  int64_t length = in_pieces_ ? std::min(request_.prefill_chunk, left) : left;
  // A lone last token would run as a decode step does (Mamba-2's dt floor is for prompts only).
  if (left - length == 1) ++length;
  const auto piece_start = Clock::now();
  const std::span<const int32_t> piece = std::span<const int32_t>(ids_).subspan(prefilled_, length);
  result_.prompt_logits = session_.executor_->run(piece, prefilled_, *prefill_, *state_, arena_,
                                                  request_.prefill_observer);
  result_.prefill_seconds += seconds_since(piece_start);
  prefilled_ += length;
  if (prefilling()) return;
  decode_start_ = Clock::now();
  if (request_.max_new_tokens > 0) {
    choose(result_.prompt_logits);
  } else {
    ended_ = true;
    result_.activation_bytes = arena_.bytes();
  }
}

void SequenceRun::choose(std::span<const float> logits) {
  if (request_.top_ids > 0) result_.top_ids.push_back(top_k_indices(logits, request_.top_ids));
  // Rank 0 chooses and every rank continues with its choice, so the ranks of a sharded run
  // never diverge (their samplers' seeds may differ).
  int32_t next = sampler_.next(logits, ids_);
  session_.options_.comm->broadcast(&next, 1, 0);
  ids_.push_back(next);
  result_.tokens.push_back(next);
  if (request_.on_token) request_.on_token(next);
  if (std::find(eos_.begin(), eos_.end(), next) != eos_.end()) {
    result_.stopped_at_eos = true;
    ended_ = true;
  } else if (static_cast<int64_t>(result_.tokens.size()) == request_.max_new_tokens ||
             (request_.should_stop && request_.should_stop())) {
    ended_ = true;
  }
  if (ended_) {
    result_.decode_seconds = seconds_since(decode_start_);
    result_.activation_bytes = arena_.bytes();
  }
}

std::vector<int32_t> SequenceRun::draft() const {
  const int64_t room = request_.max_new_tokens - static_cast<int64_t>(result_.tokens.size()) - 1;
  return prompt_lookup_draft(ids_, request_.prompt_lookup.max_ngram,
                             std::min(request_.prompt_lookup.draft_tokens, room));
}

std::shared_ptr<const VisualInputs> Session::encode_images(std::span<const int32_t> prompt,
                                                           const PixelValues& pixels) const {
  if (!vision_)
    fail(ErrorKind::kUsage, model_dir_ + ": " + config_.spec.model_type + " is a text model; it takes no images");
  return qwen_visual_inputs(prompt, config_.spec.image_token_id, pixels.grid_thw, vision_->spec().merge_size,
                            vision_->encode(pixels, kernels_for(options_.backend)));
}

std::unique_ptr<SequenceRun> Session::start(std::span<const int32_t> prompt, const GenerateRequest& request) {
  return std::unique_ptr<SequenceRun>(new SequenceRun(*this, prompt, request));
}

void Session::step(SequenceRun& run) {
  if (run.prefilling()) return run.prefill_piece();
  const int64_t position = run.position();
  std::vector<float> logits;
  if (recompute_before(config_.spec, position)) {
    ExecutionPlan whole{plan_buffers(program_, static_cast<int64_t>(run.ids_.size())), run.prefill_->choices};
    logits = executor_->run(run.ids_, 0, whole, *run.state_, run.arena_);
  } else if (const std::vector<int32_t> drafts = run.draft(); !drafts.empty()) {
    return check_drafts(run, drafts);
  } else {
    const int32_t token = run.last_token();
    logits = executor_->run({&token, 1}, position, *run.decode_, *run.state_, run.arena_);
  }
  run.choose(logits);
}

void Session::check_drafts(SequenceRun& run, std::span<const int32_t> drafts) {
  std::vector<int32_t> tokens{run.last_token()};
  tokens.insert(tokens.end(), drafts.begin(), drafts.end());
  const int64_t count = static_cast<int64_t>(tokens.size());
  const ExecutionPlan& plan = rows_plan(count, run.decode_->choices);
  // The rows of rejected tokens stay in the state, past the sequence's end, until the positions
  // run again and write over them.
  const std::vector<float> logits = executor_->run_every_row(tokens, run.position(), plan, *run.state_, run.arena_);
  const size_t vocab = logits.size() / tokens.size();
  run.result_.drafted_tokens += static_cast<int64_t>(drafts.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    run.choose(std::span<const float>(logits).subspan(i * vocab, vocab));
    const bool stands = i < drafts.size() && run.last_token() == drafts[i];
    if (stands) ++run.result_.accepted_tokens;
    if (!stands || run.ended()) return;
  }
}

std::vector<float> Session::logits_after_each(std::span<const int32_t> ids) {
  if (encodes()) fail(ErrorKind::kUsage, model_dir_ + ": " + config_.spec.model_type + " is an encoder; it gives no logits");
  const int64_t count = static_cast<int64_t>(ids.size());
  if (count == 0) fail(ErrorKind::kUsage, "no tokens to take the logits after");
  if (count > config_.spec.max_positions)
    fail(ErrorKind::kUsage, std::to_string(count) + " tokens exceed the model's max_position_embeddings of " +
                                std::to_string(config_.spec.max_positions));
  KernelChoices choices = decode_plan_.choices;
  if (compiled_) {
    const std::lock_guard lock(compile_mutex_);
    choices = compiled_->prepare(count, 0).decode.choices;
  }
  SequenceState state = program_.make_state({count, DType::kF32});
  Arena arena;
  return executor_->run_every_row(ids, 0, rows_plan(count, choices), state, arena);
}

const ExecutionPlan& Session::rows_plan(int64_t rows, const KernelChoices& choices) {
  const std::lock_guard lock(compile_mutex_);
  auto [it, made] = rows_plans_.try_emplace(rows);
  if (made) it->second = {plan_buffers(program_, rows, rows), choices};
  return it->second;
}

void Session::step_batch(std::span<SequenceRun* const> runs) {
  std::vector<SequenceRun*> together;
  bool piece_run = false;
  for (SequenceRun* run : runs) {
    if (run->prefilling()) {
      // One piece of one prompt per step, the first in line's: the others' tokens wait for no more.
      if (!std::exchange(piece_run, true)) step(*run);
    } else if (options_.comm->size() > 1 || recompute_before(config_.spec, run->position())) {
      step(*run);
    } else {
      together.push_back(run);
    }
  }
  if (together.size() == 1) return step(*together.front());
  if (together.empty()) return;
  const int64_t count = static_cast<int64_t>(together.size());
  std::vector<int32_t> tokens;
  std::vector<int64_t> positions;
  std::vector<SequenceState*> states;
  for (SequenceRun* run : together) {
    tokens.push_back(run->last_token());
    positions.push_back(run->position());
    states.push_back(&*run->state_);
  }
  // The decode plan's kernel choices; buffers for a row per sequence.
  const ExecutionPlan& plan = rows_plan(count, together.front()->decode_->choices);
  const std::vector<float> logits = executor_->run_batch(tokens, positions, states, plan, batch_arena_);
  const size_t vocab = logits.size() / together.size();
  for (size_t i = 0; i < together.size(); ++i)
    together[i]->choose(std::span<const float>(logits).subspan(i * vocab, vocab));
}

GenerationResult Session::generate(std::span<const int32_t> prompt, const GenerateRequest& request) {
  const std::unique_ptr<SequenceRun> run = start(prompt, request);
  while (!run->ended()) step(*run);
  return std::move(run->result());
}

}  // namespace canrun
