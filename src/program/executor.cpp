#include "program/executor.h"

#include <exception>
#include <string>

#include "util/error.h"

namespace canrun {

std::vector<float> Executor::run(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                                 SequenceState& state, Arena& arena, StepObserver* observer) const {
  return forward(tokens, start, plan, state, arena, observer, 1);
}

std::vector<float> Executor::run_every_row(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                                           SequenceState& state, Arena& arena) const {
  return forward(tokens, start, plan, state, arena, nullptr, static_cast<int64_t>(tokens.size()));
}

std::vector<float> Executor::forward(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                                     SequenceState& state, Arena& arena, StepObserver* observer,
                                     int64_t output_rows) const {
  const int64_t count = static_cast<int64_t>(tokens.size());
  if (count == 0) fail(ErrorKind::kRuntime, "forward: no tokens to run");
  if (start < 0 || start + count > state.capacity())
    fail(ErrorKind::kRuntime, "positions " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
                                  " do not fit the KV cache of " + std::to_string(state.capacity()) + " tokens");
  const BufferPlan& buffers = plan.buffers;
  if (count > buffers.tokens || output_rows > buffers.last_rows || buffers.offsets.size() != program_.values().size())
    fail(ErrorKind::kRuntime, "forward: a buffer plan for " + std::to_string(buffers.tokens) + " tokens and " +
                                  std::to_string(buffers.last_rows) + " last rows cannot run " +
                                  std::to_string(count) + " tokens with " + std::to_string(output_rows));
  std::byte* base = arena.reserve(buffers.arena_bytes, "activations");
  std::vector<float*> bound(program_.values().size());
  for (size_t v = 0; v < bound.size(); ++v) bound[v] = reinterpret_cast<float*>(base + buffers.offsets[v]);
  StepContext context(program_, kernels_, plan.choices, comm_, state, tokens, start, std::move(bound), output_rows);
  for (const auto& step : program_.steps()) {
    step->run(context);
    if (observer != nullptr) observer->after_step(*step, context);
  }
  const float* logits = context.value(program_.output());
  return std::vector<float>(logits, logits + context.floats(program_.output()));
}

std::vector<float> Executor::run_batch(std::span<const int32_t> tokens, std::span<const int64_t> positions,
                                       std::span<SequenceState* const> states, const ExecutionPlan& plan,
                                       Arena& arena) const {
  if (tokens.empty() || positions.size() != tokens.size() || states.size() != tokens.size())
    fail(ErrorKind::kRuntime, "batch: one token, position and state per sequence");
  return run_rows(tokens, positions, std::vector<int64_t>(tokens.size(), 1), states, plan, arena, false);
}

std::vector<float> Executor::run_sequences(std::span<const int32_t> tokens, std::span<const int64_t> lengths,
                                           std::span<SequenceState* const> states, const ExecutionPlan& plan,
                                           Arena& arena) const {
  int64_t total = 0;
  for (int64_t length : lengths) {
    if (length < 1) fail(ErrorKind::kRuntime, "batch: a sequence without tokens");
    total += length;
  }
  if (lengths.empty() || states.size() != lengths.size() || total != static_cast<int64_t>(tokens.size()))
    fail(ErrorKind::kRuntime, "batch: the sequences' lengths, states and tokens disagree");
  return run_rows(tokens, std::vector<int64_t>(lengths.size(), 0), lengths, states, plan, arena, comm_.size() == 1);
}

std::vector<float> Executor::run_rows(std::span<const int32_t> tokens, std::span<const int64_t> starts,
                                      std::span<const int64_t> lengths, std::span<SequenceState* const> states,
                                      const ExecutionPlan& plan, Arena& arena, bool threads_over_sequences) const {
  const int64_t count = static_cast<int64_t>(tokens.size());
  const int64_t sequences = static_cast<int64_t>(lengths.size());
  const BufferPlan& buffers = plan.buffers;
  if (count > buffers.tokens || sequences > buffers.last_rows || buffers.offsets.size() != program_.values().size())
    fail(ErrorKind::kRuntime, "batch: a buffer plan for " + std::to_string(buffers.last_rows) + " sequences of " +
                                  std::to_string(buffers.tokens) + " tokens cannot run " + std::to_string(sequences) +
                                  " of " + std::to_string(count));
  for (int64_t i = 0; i < sequences; ++i)
    if (starts[i] < 0 || starts[i] + lengths[i] > states[i]->capacity())
      fail(ErrorKind::kRuntime, "batch: positions " + std::to_string(starts[i]) + ".." +
                                    std::to_string(starts[i] + lengths[i] - 1) + " do not fit the KV cache of " +
                                    std::to_string(states[i]->capacity()) + " tokens");
  std::byte* base = arena.reserve(buffers.arena_bytes, "activations");
  std::vector<float*> bound(program_.values().size());
  for (size_t v = 0; v < bound.size(); ++v) bound[v] = reinterpret_cast<float*>(base + buffers.offsets[v]);
  StepContext whole(program_, kernels_, plan.choices, comm_, *states[0], tokens, 0, bound, sequences);
  // Sequence i's view: its rows of every value (its tokens', or its one last row), its tokens,
  // positions and state.
  std::vector<StepContext> views;
  views.reserve(static_cast<size_t>(sequences));
  int64_t first_row = 0;
  for (int64_t i = 0; i < sequences; ++i) {
    std::vector<float*> rows(bound.size());
    for (size_t v = 0; v < bound.size(); ++v) {
      const ValueInfo& info = program_.values()[v];
      rows[v] = bound[v] + (info.rows == ValueRows::kTokens ? first_row : i) * info.width;
    }
    views.emplace_back(program_, kernels_, plan.choices, comm_, *states[i], tokens.subspan(first_row, lengths[i]),
                       starts[i], std::move(rows));
    first_row += lengths[i];
  }
  for (const auto& step : program_.steps()) {
    if (step->row_wise()) {
      step->run(whole);
    } else if (threads_over_sequences && sequences > 1) {
      // A step's error in one sequence is rethrown once every thread is out of the loop.
      std::vector<std::exception_ptr> errors(static_cast<size_t>(sequences));
#pragma omp parallel for schedule(dynamic)
      for (int64_t i = 0; i < sequences; ++i) {
        try {
          step->run(views[static_cast<size_t>(i)]);
        } catch (...) {
          errors[static_cast<size_t>(i)] = std::current_exception();
        }
      }
      for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
    } else {
      for (StepContext& view : views) step->run(view);
    }
  }
  const float* output = whole.value(program_.output());
  return std::vector<float>(output, output + whole.floats(program_.output()));
}

}  // namespace canrun
