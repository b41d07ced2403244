// The buffer plan of a program for runs of up to `tokens` tokens: every value placed in one
// arena by its live range (from the step that first touches it to the last), so the peak
// activation memory of a shape is known before running it, and the executor allocates exactly
// that. Derived from the program alone; a compiled plan stores it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel_choices.h"
#include "program/program.h"

namespace canrun {

struct BufferPlan {
  int64_t tokens = 0;            // the most tokens a run with this plan may have
  int64_t last_rows = 1;         // the rows of "last" values: the sequences of a batch
  std::vector<int64_t> offsets;  // per value: bytes into the arena, 64-byte aligned
  std::vector<int64_t> bytes;    // per value at `tokens` (0: never touched)
  int64_t arena_bytes = 0;       // the peak: what the activations need at once
  int64_t total_bytes = 0;       // what they would need without reuse
};

// Places each value at the lowest offset free for its whole live range, largest first.
// `last_rows` > 1: for a batch of that many sequences decoding one token each.
BufferPlan plan_buffers(const Program& program, int64_t tokens, int64_t last_rows = 1);

// What one run shape executes with: its buffers and the kernel choices made for it.
struct ExecutionPlan {
  BufferPlan buffers;
  KernelChoices choices = {};  // none: every kernel's default
};

}  // namespace canrun
