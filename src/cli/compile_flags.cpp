#include "cli/compile_flags.h"

#include <cstdlib>

#include "kernels/cpu/instruction_set.h"
#include "util/error.h"

namespace canrun {

void add_compile_flags(CLI::App* command, CompileFlags& flags, bool cache_flags) {
  command->add_flag("--no-compile", flags.no_compile,
                    "cpu backend: run the kernels on the weights as loaded, without a plan");
  command->add_option("--buckets", flags.buckets,
                      "Prompt-length buckets a plan is compiled for, ascending, comma-separated (default "
                      "16,32,64,...,32768)");
  command->add_option("--products", flags.products,
                      "Weight products: f32 (default, every matrix as stored) or bf16 (f32 matrices packed as "
                      "bf16, and on AVX512_BF16 processors the x86_64-avx512-bf16 kernels unless CANRUN_ISA "
                      "says otherwise: half the weight bytes, twice the product rate; results move by bf16's "
                      "rounding, about 2^-8 relative)");
  if (!cache_flags) return;
  command->add_flag("--no-plan-cache", flags.no_plan_cache,
                    "cpu backend: compile without reading or writing the plan cache");
  command->add_option("--cache-dir", flags.cache_dir,
                      "Plan cache folder (default: $CANRUN_CACHE_DIR, else $XDG_CACHE_HOME/canrun/plans, else "
                      "~/.cache/canrun/plans)");
}

std::optional<CompileOptions> compile_options(const CompileFlags& flags, Backend backend) {
  const bool compiling = backend == Backend::kCpu && !flags.no_compile;
  if (!compiling) {
    const std::string reason = backend == Backend::kCpu ? "--no-compile" : "the ref backend, which is never compiled";
    if (flags.no_plan_cache) fail(ErrorKind::kUsage, "--no-plan-cache has no effect with " + reason);
    if (!flags.cache_dir.empty()) fail(ErrorKind::kUsage, "--cache-dir has no effect with " + reason);
    if (!flags.buckets.empty()) fail(ErrorKind::kUsage, "--buckets has no effect with " + reason);
    if (!flags.products.empty() && flags.products != "f32")
      fail(ErrorKind::kUsage, "--products " + flags.products + " has no effect with " + reason);
    return std::nullopt;
  }
  CompileOptions options;
  options.use_cache = !flags.no_plan_cache;
  options.cache_dir = flags.cache_dir;
  if (!flags.buckets.empty()) options.buckets = parse_prompt_buckets(flags.buckets, "--buckets");
  if (flags.products == "bf16") {
    options.products = DType::kBF16;
    // Products in bf16 take both operands in bf16: vdpbf16ps where the processor has it, unless
    // CANRUN_ISA chose a set already (the kernels read it when they first run).
    using cpu::InstructionSet;
    if (cpu::processor_supports(InstructionSet::kAvx512Bf16))
      ::setenv("CANRUN_ISA", std::string(cpu::instruction_set_name(InstructionSet::kAvx512Bf16)).c_str(), 0);
  } else if (!flags.products.empty() && flags.products != "f32")
    fail(ErrorKind::kUsage, "--products '" + flags.products + "': must be f32 or bf16");
  return options;
}

}  // namespace canrun
