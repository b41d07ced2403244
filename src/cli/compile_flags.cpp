#include "cli/compile_flags.h"

#include "util/error.h"

namespace canrun {

void add_compile_flags(CLI::App* command, CompileFlags& flags, bool cache_flags) {
  command->add_flag("--no-compile", flags.no_compile,
                    "cpu backend: run the kernels on the weights as loaded, without a plan");
  command->add_option("--buckets", flags.buckets,
                      "Prompt-length buckets a plan is compiled for, ascending, comma-separated (default "
                      "16,32,64,...,32768)");
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
    return std::nullopt;
  }
  CompileOptions options;
  options.use_cache = !flags.no_plan_cache;
  options.cache_dir = flags.cache_dir;
  if (!flags.buckets.empty()) options.buckets = parse_prompt_buckets(flags.buckets, "--buckets");
  return options;
}

}  // namespace canrun
