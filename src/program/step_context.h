// What a step sees while it runs: the backend's kernels and the plan's kernel choices, the
// run's tokens and positions, the buffers of its values, the sequence's state and the
// communicator of a sharded run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernel_table.h"
#include "parallel/communicator.h"
#include "program/program.h"

namespace canrun {

class StepContext {
 public:
  StepContext(const Program& program, const KernelTable& kernels, const KernelChoices& choices,
              Communicator& comm, SequenceState& state, std::span<const int32_t> tokens, int64_t start,
              std::vector<float*> buffers, int64_t last_rows = 1)
      : program_(program), kernels_(kernels), choices_(choices), comm_(comm), state_(state), tokens_(tokens),
        start_(start), buffers_(std::move(buffers)), last_rows_(last_rows) {}

  const KernelTable& kernels() const { return kernels_; }
  const KernelChoices& choices() const { return choices_; }
  Communicator& comm() const { return comm_; }
  SequenceState& state() const { return state_; }
  // The run: tokens at positions [start, start + count).
  std::span<const int32_t> tokens() const { return tokens_; }
  int64_t count() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t start() const { return start_; }

  float* value(ValueId id) const { return buffers_[static_cast<size_t>(id)]; }
  int64_t rows(ValueId id) const { return program_.rows(id, count(), last_rows_); }
  int64_t width(ValueId id) const { return program_.values()[static_cast<size_t>(id)].width; }
  int64_t floats(ValueId id) const { return rows(id) * width(id); }

 private:
  const Program& program_;
  const KernelTable& kernels_;
  const KernelChoices& choices_;
  Communicator& comm_;
  SequenceState& state_;
  std::span<const int32_t> tokens_;
  int64_t start_;
  std::vector<float*> buffers_;
  int64_t last_rows_;  // a batch's sequences; 1 for one sequence's run
};

}  // namespace canrun
