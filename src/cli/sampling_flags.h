// How `canrun generate` chooses tokens: the model's generation_config.json (transformers'
// defaults where it says nothing: greedy), with the sampling flags over it. Any of
// --temperature, --top-k, --top-p, --min-p and --seed turns sampling on; --greedy turns it off
// and excludes them; --repetition-penalty applies either way, as in transformers.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>

#include "checkpoint/generation_config.h"
#include "runtime/sampling.h"

namespace canrun {

struct SamplingFlags {
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<uint64_t> seed;
  bool greedy = false;
  bool do_sample = false;
};

// Out-of-range values and conflicting flags are usage errors naming the option, raised while
// the command line is parsed.
void add_sampling_flags(CLI::App* command, SamplingFlags& flags);
// The model's sampling settings with the flags over them. Throws Error(kUsage) when the result
// samples at the model's temperature of 0.
SamplingParams sampling_params(const SamplingFlags& flags, const GenerationConfig& model);

}  // namespace canrun
