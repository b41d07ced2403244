#include "cli/sampling_flags.h"

#include <string>

#include "util/error.h"

namespace canrun {
namespace {

// A check that the option's value, a number (cli/option_checks.h reads it), is one for which
// `in_range` holds; CLI11 names the option in front of the message.
template <typename T, typename InRange>
CLI::Validator value_check(InRange in_range, const std::string& range) {
  return CLI::Validator(
      [in_range, range](std::string& input) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(input, value)) return "";  // the number check says why
        return in_range(value) ? "" : "must be " + range + ", got " + input;
      },
      "");
}

}  // namespace

void add_sampling_flags(CLI::App* command, SamplingFlags& flags) {
  CLI::Option* temperature =
      command
          ->add_option("--temperature", flags.temperature,
                       "Sample, with the logits divided by T > 0 (default: generation_config.json's, else 1)")
          ->check(
              value_check<double>([](double t) { return t > 0; }, "> 0 to sample (for greedy decoding use --greedy)"));
  CLI::Option* top_k = command
                           ->add_option("--top-k", flags.top_k,
                                        "Sample from the K most likely tokens only, 0: all (default: "
                                        "generation_config.json's, else 50)")
                           ->check(value_check<int64_t>([](int64_t k) { return k >= 0; }, ">= 0"));
  CLI::Option* top_p = command
                           ->add_option("--top-p", flags.top_p,
                                        "Sample from the fewest most likely tokens whose probabilities add "
                                        "up to P or more, P in (0, 1], 1: all (default: generation_config.json's, "
                                        "else 1)")
                           ->check(value_check<double>([](double p) { return p > 0 && p <= 1; }, "in (0, 1]"));
  CLI::Option* min_p = command
                           ->add_option("--min-p", flags.min_p,
                                        "Sample only from tokens at least P times as likely as the most "
                                        "likely one, P in [0, 1] (default: generation_config.json's, else none)")
                           ->check(value_check<double>([](double p) { return p >= 0 && p <= 1; }, "in [0, 1]"));
  command
      ->add_option("--repetition-penalty", flags.repetition_penalty,
                   "Divide the positive logits and multiply the negative ones of every token in the prompt or "
                   "generated so far by R > 0, greedy or sampling, 1: none (default: generation_config.json's, "
                   "else 1)")
      ->check(value_check<double>([](double r) { return r > 0; }, "> 0"));
  CLI::Option* seed =
      command
          ->add_option("--seed", flags.seed,
                       "Sample, with draws from this seed, 0 to 2^64-1 (default: a fresh "
                       "one, printed with the timings and in the --json output)");
  CLI::Option* greedy =
      command->add_flag("--greedy", flags.greedy,
                        "Choose the most likely token at every step (after any repetition penalty), whatever "
                        "generation_config.json says");
  CLI::Option* do_sample = command->add_flag(
      "--do-sample", flags.do_sample,
      "Sample, with generation_config.json's settings where no flag gives them (else transformers' defaults: "
      "temperature 1, top-k 50)");
  for (CLI::Option* sampling_only : {do_sample, temperature, top_k, top_p, min_p, seed})
    greedy->excludes(sampling_only);
}

SamplingParams sampling_params(const SamplingFlags& flags, const GenerationConfig& model) {
  SamplingParams params;
  params.do_sample = !flags.greedy && (model.do_sample || flags.do_sample || flags.temperature || flags.top_k ||
                                       flags.top_p || flags.min_p || flags.seed);
  params.temperature = flags.temperature.value_or(model.temperature);
  params.top_k = flags.top_k.value_or(model.top_k);
  params.top_p = flags.top_p.value_or(model.top_p);
  params.min_p = flags.min_p ? flags.min_p : model.min_p;
  params.repetition_penalty = flags.repetition_penalty.value_or(model.repetition_penalty);
  params.seed = flags.seed;
  if (params.do_sample && params.temperature == 0)
    fail(ErrorKind::kUsage,
         "the model's generation config has temperature 0, which cannot sample: give --temperature T > 0, or "
         "--greedy");
  return params;
}

}  // namespace canrun
