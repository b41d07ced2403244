// The cpu instruction sets a kernel test runs: every one this processor has. The first call
// prints the ones it skips, so a log says what the machine could not test.
#pragma once

#include <iostream>
#include <vector>

#include "kernels/cpu/instruction_set.h"
#include "kernels/cpu/primitives.h"

namespace canrun {

inline const std::vector<cpu::InstructionSet>& tested_instruction_sets() {
  static const std::vector<cpu::InstructionSet> sets = [] {
    for (cpu::InstructionSet set : {cpu::InstructionSet::kAvx2Fma, cpu::InstructionSet::kAvx512,
                                    cpu::InstructionSet::kAvx512Bf16})
      if (!cpu::processor_supports(set))
        std::cout << "[ skipped  ] instruction set " << cpu::instruction_set_name(set)
                  << ": this processor lacks it\n";
    return cpu::supported_instruction_sets();
  }();
  return sets;
}

}  // namespace canrun
