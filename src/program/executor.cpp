#include "program/executor.h"

#include <string>

#include "util/error.h"

namespace canrun {

std::vector<float> Executor::run(std::span<const int32_t> tokens, int64_t start, const ExecutionPlan& plan,
                                 SequenceState& state, Arena& arena, StepObserver* observer) const {
  const int64_t count = static_cast<int64_t>(tokens.size());
  if (count == 0) fail(ErrorKind::kRuntime, "forward: no tokens to run");
  if (start < 0 || start + count > state.capacity())
    fail(ErrorKind::kRuntime, "positions " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
                                  " do not fit the KV cache of " + std::to_string(state.capacity()) + " tokens");
  const BufferPlan& buffers = plan.buffers;
  if (count > buffers.tokens || buffers.offsets.size() != program_.values().size())
    fail(ErrorKind::kRuntime, "forward: a buffer plan for " + std::to_string(buffers.tokens) +
                                  " tokens cannot run " + std::to_string(count));
  std::byte* base = arena.reserve(buffers.arena_bytes, "activations");
  std::vector<float*> bound(program_.values().size());
  for (size_t v = 0; v < bound.size(); ++v) bound[v] = reinterpret_cast<float*>(base + buffers.offsets[v]);
  StepContext context(program_, kernels_, plan.choices, comm_, state, tokens, start, std::move(bound));
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
  const int64_t count = static_cast<int64_t>(tokens.size());
  if (count == 0 || positions.size() != tokens.size() || states.size() != tokens.size())
    fail(ErrorKind::kRuntime, "batch: one token, position and state per sequence");
  const BufferPlan& buffers = plan.buffers;
  if (count > buffers.tokens || count > buffers.last_rows || buffers.offsets.size() != program_.values().size())
    fail(ErrorKind::kRuntime, "batch: a buffer plan for " + std::to_string(buffers.last_rows) +
                                  " sequences cannot run " + std::to_string(count));
  for (int64_t i = 0; i < count; ++i)
    if (positions[i] < 0 || positions[i] >= states[i]->capacity())
      fail(ErrorKind::kRuntime, "batch: position " + std::to_string(positions[i]) + " does not fit the KV cache of " +
                                    std::to_string(states[i]->capacity()) + " tokens");
  std::byte* base = arena.reserve(buffers.arena_bytes, "activations");
  std::vector<float*> bound(program_.values().size());
  for (size_t v = 0; v < bound.size(); ++v) bound[v] = reinterpret_cast<float*>(base + buffers.offsets[v]);
  StepContext whole(program_, kernels_, plan.choices, comm_, *states[0], tokens, 0, bound, count);
  // Sequence i's view: its row of every value, its token, position and state.
  std::vector<StepContext> rows;
  rows.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    std::vector<float*> row(bound.size());
    for (size_t v = 0; v < bound.size(); ++v) row[v] = bound[v] + i * program_.values()[v].width;
    rows.emplace_back(program_, kernels_, plan.choices, comm_, *states[i], tokens.subspan(i, 1), positions[i],
                      std::move(row));
  }
  for (const auto& step : program_.steps()) {
    if (step->row_wise()) {
      step->run(whole);
    } else {
      for (StepContext& row : rows) step->run(row);
    }
  }
  const float* logits = whole.value(program_.output());
  return std::vector<float>(logits, logits + whole.floats(program_.output()));
}

}  // namespace canrun
