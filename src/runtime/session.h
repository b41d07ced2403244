// The engine's one entry point: a model folder opened on a backend (compiled on cpu unless told
// otherwise, sharded over a communicator's ranks), and generation requests run on it with their
// options and observers, timed. generate, bench, the lab's tested and reference runs and the
// parity tests all go through it; it holds the one generation loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "compile/compiler.h"
#include "kernels/backend.h"
#include "parallel/communicator.h"
#include "program/executor.h"
#include "runtime/model_config.h"
#include "runtime/prompt_lookup.h"
#include "runtime/sampling.h"
#include "vision/qwen_vision.h"

namespace canrun {

// What opening a session does, in order: read config and weights, then compile.
enum class SessionPhase { kLoad, kCompile };

struct SessionOptions {
  Backend backend = Backend::kCpu;
  // The compile step on cpu; nullopt runs the weights as loaded (--no-compile). Never on ref.
  std::optional<CompileOptions> compile = CompileOptions{};
  // Sharded: this process is one rank of the communicator and holds its part of the model.
  std::shared_ptr<Communicator> comm = single_process_communicator();
  // Told as each phase starts, for callers that say where a failure came from.
  std::function<void(SessionPhase)> on_phase;
};

// An uncompiled run on `backend`: the ref yardstick, or cpu --no-compile.
SessionOptions uncompiled(Backend backend, std::shared_ptr<Communicator> comm = single_process_communicator());

struct GenerateRequest {
  int64_t max_new_tokens = 32;
  std::optional<std::vector<int32_t>> eos_token_ids;  // none: the model's; empty: never stop early
  int64_t cache_capacity = 0;  // KV cache positions; 0: the compiled shape's, else prompt + new tokens
  DType kv_dtype = DType::kF32;  // what the KV cache stores (bf16 / f16: half the bytes, values rounded)
  int64_t top_ids = 0;         // > 0: the ids of that many largest logits at every generated position
  SamplingParams sampling;     // greedy unless told to sample (the model's generation config is not applied)
  std::function<void(int32_t)> on_token;     // each generated token as soon as it is chosen
  // Asked after each generated token: true ends the generation there (a stop string seen, a
  // client gone). Single process only: the ranks of a sharded run would not all be asked.
  std::function<bool()> should_stop;
  StepObserver* prefill_observer = nullptr;  // sees every step of the prompt's forward pass
  // > 0: the prompt runs in pieces of at most this many tokens, a piece per step and none in
  // start, so that other sequences decoding in a batch go on between them (chunked prefill);
  // 0: all at once in start.
  int64_t prefill_chunk = 0;
  // The prompt's images as the text model reads them (Session::encode_images); null: none.
  std::shared_ptr<const VisualInputs> visual;
  PromptLookup prompt_lookup;
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // generated ids, ending with the eos id if one stopped it
  bool stopped_at_eos = false;
  std::vector<float> prompt_logits;           // logits after the last prompt token
  std::vector<std::vector<int32_t>> top_ids;  // per generated token, with request.top_ids
  std::optional<uint64_t> seed;               // sampling: the seed the draws came from, to repeat them
  double prefill_seconds = 0;  // the prompt's forward passes (a chunked prompt's pieces summed)
  double decode_seconds = 0;   // for tokens after the first
  int64_t kv_cache_bytes = 0;
  int64_t activation_bytes = 0;  // the largest arena a forward pass used
  // Speculative decoding: the tokens drafted, and of those the ones that stood.
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
};

// One input of an encoder: its token ids and, for a sentence pair, each token's type (empty: 0).
struct EncoderInput {
  std::span<const int32_t> ids;
  std::span<const int32_t> types;
};

class Session;

// One sequence's generation, token by token: Session::start checks the request, makes its cache
// and runs the prompt (chunked: none of it); each step then runs the prompt's next piece, or its
// last token and chooses the next one. generate runs one alone to its end; step_batch runs many
// at once.
class SequenceRun {
 public:
  SequenceRun(const SequenceRun&) = delete;
  SequenceRun& operator=(const SequenceRun&) = delete;
  bool ended() const { return ended_; }
  // Part of the prompt has yet to run (chunked prefill): the next step runs a piece of it.
  bool prefilling() const { return prefilled_ < prompt_length_; }
  int32_t last_token() const { return ids_.back(); }
  int64_t position() const { return static_cast<int64_t>(ids_.size()) - 1; }  // where last_token() goes
  // The result so far; the whole one once ended().
  GenerationResult& result() { return result_; }

 private:
  friend class Session;
  SequenceRun(Session& session, std::span<const int32_t> prompt, const GenerateRequest& request);
  // Runs the prompt's next piece (all of what is left unless chunked); after the last, chooses
  // the first token.
  void prefill_piece();
  // Chooses the next token after `logits`, tells on_token and ends at eos, max_new_tokens or
  // should_stop; the decode time runs from the first token to the last.
  void choose(std::span<const float> logits);
  // The tokens prompt lookup drafts to follow last_token(), no more than the generation has room
  // for beyond the token the check adds; empty without prompt lookup.
  std::vector<int32_t> draft() const;

  Session& session_;
  GenerateRequest request_;
  int64_t prompt_length_ = 0;
  int64_t prefilled_ = 0;  // prompt tokens run so far
  bool in_pieces_ = false;  // chunked prefill: start runs none of the prompt, each step a piece
  std::vector<int32_t> ids_;  // the prompt and every chosen token
  std::vector<int32_t> eos_;
  Sampler sampler_;
  ExecutionPlan derived_prefill_;  // uncompiled: made for this prompt
  const ExecutionPlan* prefill_ = nullptr;
  const ExecutionPlan* decode_ = nullptr;
  std::optional<SequenceState> state_;  // made once the plans say its capacity
  Arena arena_;
  GenerationResult result_;
  std::chrono::steady_clock::time_point decode_start_;
  bool ended_ = false;
};

class Session {
 public:
  friend class SequenceRun;
  // Reads config, generation config and weights (this rank's part), builds the model program
  // and, compiling, packs its weights (or maps them from the plan cache). Errors name the file,
  // field or option at fault.
  Session(std::string model_dir, SessionOptions options);

  const std::string& model_dir() const { return model_dir_; }
  const DecoderSpec& spec() const { return config_.spec; }
  const GenerationConfig& generation() const { return config_.generation; }
  DType stored_dtype() const { return stored_dtype_; }
  Backend backend() const { return options_.backend; }
  Communicator& communicator() const { return *options_.comm; }
  const Program& program() const { return program_; }
  double load_seconds() const { return load_seconds_; }
  // Null when the model runs uncompiled.
  const CompiledModel* compiled() const { return compiled_.get(); }
  // An encoder: its forward pass gives every token's hidden state (encode), not logits (generate).
  bool encodes() const { return config_.spec.output == ModelOutput::kHiddenStates; }
  // The hidden states of an encoder over whole inputs at once, each attending within itself
  // (unpadded; the weight products read their weights once for all): every token's row of
  // hidden_size floats, input after input. Throws Error(kUsage) for a generating model, no
  // inputs, an empty input, one longer than the model's positions, or more tokens in all than
  // the largest compiled bucket. Safe from several threads; they run one after another.
  std::vector<float> encode(std::span<const EncoderInput> inputs);

  // An image-text-to-text model: it has a vision tower.
  bool takes_images() const { return vision_ != nullptr; }
  // The images of an expanded `prompt` (each image's placeholder repeated per image token)
  // through the vision tower on this session's backend. Throws Error(kUsage) for a text model,
  // or when the prompt's image tokens do not match the images.
  std::shared_ptr<const VisualInputs> encode_images(std::span<const int32_t> prompt, const PixelValues& pixels) const;

  // Throws Error(kUsage) naming the option when generations cannot use `lookup`: an encoder, a
  // model whose state folds tokens in (a recurrent or convolution layer), or longrope that
  // recomputes.
  void check_prompt_lookup(const PromptLookup& lookup) const;

  // Compiles the prompt bucket of `prompt_length` for `new_tokens` more, as generate does on first
  // use, and returns that shape (uncompiled: the prompt itself and exactly the cache it needs).
  CompiledModel::Shape prepare(int64_t prompt_length, int64_t new_tokens);

  // Generation over a static KV cache, greedy or sampled as request.sampling says, stopping at
  // max_new_tokens or an eos id. Throws Error(kUsage) when the prompt is empty or does not fit
  // the cache or the model's positions, or a sampling parameter is out of range.
  // Safe to call from several threads at once; each request has its own cache and activations.
  GenerationResult generate(std::span<const int32_t> prompt, const GenerateRequest& request);

  // The logits after every token of `ids` (ids.size() rows of vocabulary size), from position 0
  // in one forward pass, as a prompt's prefill computes them: what a training step's loss is
  // taken over. Throws Error(kUsage) for an encoder, no tokens, or more than the model's positions.
  std::vector<float> logits_after_each(std::span<const int32_t> ids);

  // generate in steps: `start` checks the request as generate does, runs the prompt and chooses
  // the first token (ended at once when max_new_tokens is 0 or that token ends it); a prompt in
  // pieces (request.prefill_chunk) runs in the steps instead, the first token after the last piece.
  std::unique_ptr<SequenceRun> start(std::span<const int32_t> prompt, const GenerateRequest& request);
  // One more token for a run that has not ended, or its prompt's next piece while it prefills.
  void step(SequenceRun& run);
  // One more token for each run at once: the row-wise steps (the weight products) read their
  // weights once for all of them. Runs that must run alone (a sharded session, a longrope
  // recompute) take their step alone. Of the runs whose prompts still run in pieces, the first in
  // `runs` runs its next piece and the others wait, so a step holds the decoding runs up by one
  // piece at most. Every run is this session's and not ended; one thread at a time.
  void step_batch(std::span<SequenceRun* const> runs);

 private:
  // Buffers for `rows` tokens, each with its own last row, with `choices`: a batch's decode step,
  // or a sequence's check of its drafted tokens. Made on first use.
  const ExecutionPlan& rows_plan(int64_t rows, const KernelChoices& choices);
  // Runs last_token() and `drafts` in one forward pass and chooses after each in turn while the
  // drafted token is the one chosen before it.
  void check_drafts(SequenceRun& run, std::span<const int32_t> drafts);

  std::string model_dir_;
  SessionOptions options_;
  ModelConfig config_;
  std::unique_ptr<WeightStore> store_;  // owns the mappings the weights may borrow
  DType stored_dtype_ = DType::kF32;
  Program program_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<CompiledModel> compiled_;
  std::unique_ptr<QwenVisionEncoder> vision_;
  ExecutionPlan decode_plan_;  // uncompiled: one token, default choices
  double load_seconds_ = 0;
  std::mutex compile_mutex_;
  std::map<int64_t, ExecutionPlan> rows_plans_;  // per rows, made on first use (under compile_mutex_)
  // An encoder's, per (tokens, inputs): its bucket's kernel choices, buffers for that many inputs.
  std::map<std::pair<int64_t, int64_t>, ExecutionPlan> encode_plans_;
  // An encoder's activations, kept from one encode to the next (one at a time: encode_mutex_).
  std::mutex encode_mutex_;
  Arena encode_arena_;
  Arena batch_arena_;
};

}  // namespace canrun
