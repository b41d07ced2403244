// Runs a model program on a backend: binds every value to its place in one arena as a buffer
// plan says, then runs the steps in order. The program and its weights are only read, so one
// program serves many sequences at once, each with its own state and arena.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/kernel_table.h"
#include "parallel/communicator.h"
#include "program/buffer_plan.h"
#include "program/program.h"
#include "program/step_context.h"
#include "util/aligned_buffer.h"

namespace canrun {

// Watches a run step by step (activation dumps).
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void after_step(const Step& step, const StepContext& context) = 0;
};

// The activations' memory of one sequence, grown when a plan needs more.
using Arena = AlignedBuffer;

class Executor {
 public:
  Executor(const Program& program, const KernelTable& kernels, Communicator& comm)
      : program_(program), kernels_(kernels), comm_(comm) {}

  // Runs `tokens` at positions [start, start + tokens.size()) with `plan` (made for at least as
  // many tokens), reading and extending `state`, and returns the program's output: the logits
  // of the last token. Throws Error(kRuntime) when the positions exceed the state's capacity.
  std::vector<float> run(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                         SequenceState& state, Arena& arena, StepObserver* observer = nullptr) const;

  // As run, but returns the output of every token, one row after another: the logits after each
  // of a sequence's drafted tokens, which speculative decoding checks at once. `plan` is made for
  // as many last rows as tokens.
  std::vector<float> run_every_row(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                                   SequenceState& state, Arena& arena) const;

  // One decode step of a batch: sequence i runs tokens[i] at positions[i] on *states[i]. Row-wise
  // steps run once over every row; the others sequence by sequence. Returns each sequence's
  // logits, one row after another. `plan` is made for at least that many tokens and last rows.
  std::vector<float> run_batch(std::span<const int32_t> tokens, std::span<const int64_t> positions,
                               std::span<SequenceState* const> states, const ExecutionPlan& plan, Arena& arena) const;

  // Whole sequences at once, each from position 0 (an encoder's batch, unpadded): sequence i runs
  // the next lengths[i] of `tokens` on *states[i]. Row-wise steps run once over every row; the
  // others run for the sequences on several threads at once (each sequence's alone: a short one
  // has too little work to share), unless the program is sharded. Returns the program's output
  // for every sequence, one after another. `plan` is made for at least that many tokens and
  // sequences.
  std::vector<float> run_sequences(std::span<const int32_t> tokens, std::span<const int64_t> lengths,
                                   std::span<SequenceState* const> states, const ExecutionPlan& plan,
                                   Arena& arena) const;

 private:
  // run and run_every_row: the output of the last `output_rows` tokens.
  std::vector<float> forward(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                             SequenceState& state, Arena& arena, StepObserver* observer, int64_t output_rows) const;

  // run_batch and run_sequences: sequence i's tokens are the next lengths[i], at positions from starts[i] on.
  // With `threads_over_sequences`, the steps that are not row-wise run for several sequences at once.
  std::vector<float> run_rows(std::span<const int32_t> tokens, std::span<const int64_t> starts,
                              std::span<const int64_t> lengths, std::span<SequenceState* const> states,
                              const ExecutionPlan& plan, Arena& arena, bool threads_over_sequences) const;

  const Program& program_;
  const KernelTable& kernels_;
  Communicator& comm_;
};

}  // namespace canrun
