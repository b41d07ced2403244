#include "program/program.h"

namespace canrun {

int64_t SequenceState::bytes() const {
  int64_t total = 0;
  for (const auto& slot : slots_) total += slot->bytes();
  return total;
}

int SequenceState::first_folding_slot() const {
  for (size_t slot = 0; slot < slots_.size(); ++slot)
    if (!slots_[slot]->rows_by_position()) return static_cast<int>(slot);
  return -1;
}

SequenceState Program::make_state(const StateShape& shape) const {
  std::vector<std::unique_ptr<BlockState>> slots;
  for (const StateSlot& slot : state_) slots.push_back(slot.make(shape));
  return SequenceState(shape, std::move(slots));
}

int64_t Program::state_bytes(const StateShape& shape) const {
  int64_t total = 0;
  for (const StateSlot& slot : state_) total += slot.bytes(shape);
  return total;
}

StepCost Program::cost(const RunShape& shape) const {
  StepCost total;
  for (const auto& step : steps_) {
    const StepCost cost = step->cost(*this, shape);
    total.flops += cost.flops;
    total.weight_bytes += cost.weight_bytes;
  }
  return total;
}

const Step* Program::find_step(std::string_view name) const {
  for (const auto& step : steps_)
    if (step->name() == name) return step.get();
  return nullptr;
}

const WeightMatrix* Program::find_matrix(std::string_view name) const {
  for (const NamedMatrix& m : matrices_)
    if (m.name == name) return m.matrix;
  return nullptr;
}

}  // namespace canrun
