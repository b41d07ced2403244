// A model program: the one executable description of a model's forward pass. An ordered list
// of typed steps (norm, linear, rotary + cache write, attention, experts, all-reduce, residual
// add...) over named values, built once from a family's spec and weights by its block kinds.
// The executor runs it on a backend's kernel table; the compile step derives from it the buffer
// plan the executor allocates from, the flops and bytes of a shape, and the matrices it packs;
// the lab's planner derives its memory estimate from it too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "program/sequence_state.h"
#include "tensor/weight_matrix.h"

namespace canrun {

class Program;
class StepContext;

// A value is an f32 activation of `width` floats per row: one row per token of the run, or one
// row (the last position's: final norm, logits). A batch of sequences decoding one token each
// has one "last" row per sequence.
using ValueId = int32_t;
enum class ValueRows { kTokens, kLast };
struct ValueInfo {
  std::string name;  // "layers.3.q"
  int64_t width = 0;
  ValueRows rows = ValueRows::kTokens;
};

// The shape a forward pass runs in: tokens at once (a prompt bucket, or 1 for a decode step)
// attending to at most `positions` cached ones.
struct RunShape {
  int64_t tokens = 0;
  int64_t positions = 0;
};

struct StepCost {
  int64_t flops = 0;
  int64_t weight_bytes = 0;  // weights read once per forward
};

// Where a step's output is found in transformers, for bisecting a disagreement (--dump): the
// output (or first input) of the module of that name, optionally columns [begin, end) of it.
struct ModuleMatch {
  std::string module;  // empty: no counterpart
  bool input = false;
  int64_t column_begin = 0, column_end = 0;  // both 0: every column
};

class Step {
 public:
  struct Info {
    std::string name;  // unique in the program: "layers.3.q_proj"
    std::vector<ValueId> inputs, outputs;
    ModuleMatch match = {};
  };
  explicit Step(Info info) : info_(std::move(info)) {}
  virtual ~Step() = default;
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  // "norm", "linear", "attention", ...: what the step does, for plans and dumps.
  virtual std::string_view kind() const = 0;
  virtual void run(StepContext& context) const = 0;
  virtual StepCost cost(const Program& program, const RunShape& shape) const { return {}; }
  // Each output row depends on the same row of the inputs and on weights only, never on the
  // position, the sequence's state or other rows: a batch of sequences runs it once over all their
  // rows (reading its weights once). Any other step runs sequence by sequence.
  virtual bool row_wise() const { return false; }

  const std::string& name() const { return info_.name; }
  const std::vector<ValueId>& inputs() const { return info_.inputs; }
  const std::vector<ValueId>& outputs() const { return info_.outputs; }
  const ModuleMatch& match() const { return info_.match; }

 private:
  Info info_;
};

// Anything a program keeps alive for its steps: the block instances that own the weights.
class ProgramPart {
 public:
  virtual ~ProgramPart() = default;
};

// A linear-layer matrix the steps read, under a stable name: what the compile step packs.
struct NamedMatrix {
  std::string name;
  WeightMatrix* matrix = nullptr;
};

class Program {
 public:
  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<std::unique_ptr<Step>>& steps() const { return steps_; }
  ValueId output() const { return output_; }  // the logits of the last position
  const std::vector<NamedMatrix>& matrices() const { return matrices_; }
  const std::vector<StateSlot>& state_slots() const { return state_; }

  // `last_rows`: a batch's sequences, each with its own last row.
  int64_t rows(ValueId id, int64_t tokens, int64_t last_rows = 1) const {
    return values_[id].rows == ValueRows::kTokens ? tokens : last_rows;
  }
  // The per-sequence state of every block that keeps one, made for `shape`.
  SequenceState make_state(const StateShape& shape) const;
  int64_t state_bytes(const StateShape& shape) const;
  StepCost cost(const RunShape& shape) const;
  // Null when there is none of that name.
  const Step* find_step(std::string_view name) const;
  const WeightMatrix* find_matrix(std::string_view name) const;

 private:
  friend class ProgramBuilder;
  std::vector<ValueInfo> values_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<NamedMatrix> matrices_;
  std::vector<StateSlot> state_;
  std::vector<std::unique_ptr<ProgramPart>> parts_;
  ValueId output_ = -1;
};

}  // namespace canrun
