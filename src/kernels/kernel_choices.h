// The kernel choices a compiled plan carries for one prompt bucket, per backend that has
// choices to make (the cpu backend: how each packed product runs). Empty: every default.
#pragma once

#include "kernels/cpu/panel_choices.h"

namespace canrun {

struct KernelChoices {
  cpu::PanelChoices panels;
};

}  // namespace canrun
