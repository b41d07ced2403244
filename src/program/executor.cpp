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

}  // namespace canrun
