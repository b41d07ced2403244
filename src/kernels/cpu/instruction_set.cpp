#include "kernels/cpu/instruction_set.h"

#include <cpuid.h>

#include <cstdlib>

#include "util/error.h"

namespace canrun::cpu {
namespace {

constexpr InstructionSet kAll[] = {InstructionSet::kPortable, InstructionSet::kAvx2Fma, InstructionSet::kAvx512,
                                   InstructionSet::kAvx512Bf16};

// The processor flags each set's kernels use, as /proc/cpuinfo and lscpu spell them.
std::vector<std::string_view> required_flags(InstructionSet set) {
  switch (set) {
    case InstructionSet::kPortable: return {};
    case InstructionSet::kAvx2Fma: return {"avx2", "fma", "f16c"};
    case InstructionSet::kAvx512: return {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl"};
    case InstructionSet::kAvx512Bf16: return {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16"};
  }
  return {};
}

// CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports has no "f16c").
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool has_flag(std::string_view flag) {
  if (flag == "avx2") return __builtin_cpu_supports("avx2");
  if (flag == "fma") return __builtin_cpu_supports("fma");
  if (flag == "f16c") return has_f16c();
  if (flag == "avx512f") return __builtin_cpu_supports("avx512f");
  if (flag == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (flag == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (flag == "avx512_bf16") return __builtin_cpu_supports("avx512bf16");
  return false;
}

std::string choices() {
  std::string list;
  for (InstructionSet set : kAll) list += (list.empty() ? "" : ", ") + std::string(instruction_set_name(set));
  return list;
}

}  // namespace

std::string_view instruction_set_name(InstructionSet set) {
  switch (set) {
    case InstructionSet::kPortable: return "x86_64-portable";
    case InstructionSet::kAvx2Fma: return "x86_64-avx2-fma";
    case InstructionSet::kAvx512: return "x86_64-avx512";
    case InstructionSet::kAvx512Bf16: return "x86_64-avx512-bf16";
  }
  return "x86_64-portable";
}

bool processor_supports(InstructionSet set) {
  for (std::string_view flag : required_flags(set))
    if (!has_flag(flag)) return false;
  return true;
}

std::vector<InstructionSet> supported_instruction_sets() {
  std::vector<InstructionSet> sets;
  for (InstructionSet set : kAll)
    if (processor_supports(set)) sets.push_back(set);
  return sets;
}

InstructionSet choose_instruction_set(std::string_view requested) {
  if (requested.empty())
    return processor_supports(InstructionSet::kAvx512) ? InstructionSet::kAvx512
           : processor_supports(InstructionSet::kAvx2Fma) ? InstructionSet::kAvx2Fma
                                                           : InstructionSet::kPortable;
  for (InstructionSet set : kAll) {
    if (instruction_set_name(set) != requested) continue;
    std::string missing;
    for (std::string_view flag : required_flags(set))
      if (!has_flag(flag)) missing += (missing.empty() ? "" : ", ") + std::string(flag);
    if (!missing.empty())
      fail(ErrorKind::kUsage, "CANRUN_ISA=" + std::string(requested) + ": this processor lacks " + missing);
    return set;
  }
  fail(ErrorKind::kUsage, "CANRUN_ISA='" + std::string(requested) + "' is no instruction set canrun has kernels for; "
                          "choose one of " + choices());
}

InstructionSet chosen_instruction_set() {
  static const InstructionSet chosen = [] {
    const char* requested = std::getenv("CANRUN_ISA");
    return choose_instruction_set(requested ? requested : "");
  }();
  return chosen;
}

}  // namespace canrun::cpu
