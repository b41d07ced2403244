#include "program/program_builder.h"

#include "util/error.h"

namespace canrun {

ValueId ProgramBuilder::value(std::string name, int64_t width, ValueRows rows) {
  program_.values_.push_back({std::move(name), width, rows});
  return static_cast<ValueId>(program_.values_.size() - 1);
}

void ProgramBuilder::add(std::unique_ptr<Step> step) {
  if (program_.find_step(step->name()) != nullptr)
    fail(ErrorKind::kRuntime, "model program: two steps named '" + step->name() + "'");
  const auto known = [&](ValueId id) { return id >= 0 && id < static_cast<ValueId>(program_.values_.size()); };
  for (ValueId id : step->inputs())
    if (!known(id)) fail(ErrorKind::kRuntime, "model program: step '" + step->name() + "' reads an unknown value");
  for (ValueId id : step->outputs())
    if (!known(id)) fail(ErrorKind::kRuntime, "model program: step '" + step->name() + "' writes an unknown value");
  program_.steps_.push_back(std::move(step));
}

void ProgramBuilder::matrix(std::string name, WeightMatrix& m) {
  if (m.empty()) return;
  if (program_.find_matrix(name) != nullptr)
    fail(ErrorKind::kRuntime, "model program: two matrices named '" + name + "'");
  program_.matrices_.push_back({std::move(name), &m});
}

int ProgramBuilder::state(StateSlot slot) {
  program_.state_.push_back(std::move(slot));
  return static_cast<int>(program_.state_.size() - 1);
}

int ProgramBuilder::find_state(const std::string& name) const {
  for (size_t slot = 0; slot < program_.state_.size(); ++slot)
    if (program_.state_[slot].name == name) return static_cast<int>(slot);
  return -1;
}

Program ProgramBuilder::finish() {
  if (program_.output_ < 0) fail(ErrorKind::kRuntime, "model program: no output value");
  return std::move(program_);
}

}  // namespace canrun
