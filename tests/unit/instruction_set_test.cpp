// Which instruction set the cpu kernels run with: the best one the processor has that keeps
// f32 activations, or the one CANRUN_ISA names, refused by name when it is unknown or the
// processor lacks it.
#include "kernels/cpu/instruction_set.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"

namespace canrun {
namespace {

using cpu::InstructionSet;

std::string refusal(std::string_view requested) {
  try {
    cpu::choose_instruction_set(requested);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  return "(no error)";
}

TEST(InstructionSet, TheBestSupportedOneUnlessOneIsNamed) {
  const std::vector<InstructionSet> sets = cpu::supported_instruction_sets();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front(), InstructionSet::kPortable);
  // bf16 products round activations, so they run only when named.
  const InstructionSet best_exact = sets.back() == InstructionSet::kAvx512Bf16 ? InstructionSet::kAvx512 : sets.back();
  EXPECT_EQ(cpu::choose_instruction_set(""), best_exact);
  for (InstructionSet set : sets) EXPECT_EQ(cpu::choose_instruction_set(cpu::instruction_set_name(set)), set);
}

TEST(InstructionSet, AnUnknownNameIsRefusedWithTheChoices) {
  const std::string message = refusal("avx512");
  EXPECT_NE(message.find("CANRUN_ISA='avx512'"), std::string::npos) << message;
  EXPECT_NE(message.find("x86_64-portable, x86_64-avx2-fma, x86_64-avx512, x86_64-avx512-bf16"), std::string::npos)
      << message;
}

TEST(InstructionSet, ASetThisProcessorLacksIsRefusedWithItsFlags) {
  for (InstructionSet set : {InstructionSet::kAvx2Fma, InstructionSet::kAvx512, InstructionSet::kAvx512Bf16}) {
    if (cpu::processor_supports(set)) continue;
    const std::string message = refusal(cpu::instruction_set_name(set));
    EXPECT_NE(message.find("this processor lacks"), std::string::npos) << message;
    return;
  }
  GTEST_SKIP() << "this processor has every instruction set canrun has kernels for";
}

}  // namespace
}  // namespace canrun
