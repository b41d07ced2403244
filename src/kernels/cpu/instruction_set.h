// The instruction sets the cpu backend has kernels for, what this processor supports, and the
// one its kernels run with: the best it supports whose products keep f32 activations (their
// results are the same bits from AVX2 up), or the one CANRUN_ISA names: x86_64-avx512-bf16,
// whose bf16 products round activations to bf16, or a lower set to compare side by side. The
// build stays baseline x86-64; each set's kernels carry their own target attributes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace canrun::cpu {

enum class InstructionSet {
  kPortable,    // plain C++
  kAvx2Fma,     // 8-wide f32 FMA (and F16C, for an f16 KV cache)
  kAvx512,      // AVX-512F/BW/VL: 16-wide f32 FMA, the same bits as kAvx2Fma in matrix products
  kAvx512Bf16,  // kAvx512 plus AVX512_BF16: bf16 weights times activations rounded to bf16
                // (vdpbf16ps); different rounding, so only chosen by name
};

// "x86_64-portable", "x86_64-avx2-fma", "x86_64-avx512", "x86_64-avx512-bf16": the name in plan
// keys and in the engine's version pair.
std::string_view instruction_set_name(InstructionSet set);
bool processor_supports(InstructionSet set);
// Every set this processor runs, the portable one first.
std::vector<InstructionSet> supported_instruction_sets();
// The set the kernels run with, decided once: CANRUN_ISA when set (an error, naming the
// variable and the choices, when it names no set or one this processor lacks), else the best
// supported one that keeps f32 activations.
InstructionSet chosen_instruction_set();
// The same decision for a given CANRUN_ISA value (empty: none set).
InstructionSet choose_instruction_set(std::string_view requested);

}  // namespace canrun::cpu
