#include "blocks/recurrent_state.h"

#include <memory>

namespace canrun {

int declare_recurrent_state(ProgramBuilder& program, const std::string& name, int64_t floats) {
  return program.state({name, [=](const StateShape&) { return floats * static_cast<int64_t>(sizeof(float)); },
                        [=](const StateShape&) { return std::make_unique<RecurrentState>(floats); }});
}

}  // namespace canrun
