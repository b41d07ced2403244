// canrun judge: the lab's judge on one text, or its calibration on a set of texts.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "lab/judge.h"
#include "lab/status.h"

namespace canrun {
namespace {

struct JudgeArgs {
  std::string model_dir = default_judge_model_dir();
  std::string prompt = "";
  std::string text;
  std::string calibration;
};

void run(const JudgeArgs& args) {
  if (args.calibration.empty() == args.text.empty())
    fail(ErrorKind::kUsage, "give either TEXT or --calibrate FILE");
  Judge judge(args.model_dir);
  if (!args.text.empty()) {
    const double score = judge.score(args.prompt, args.text);
    const Status status = score >= kJudgeThreshold ? Status::kPassJudge : Status::kFailJudge;
    std::printf("score %.3f: %s (the mean log-prob is %s canrun's threshold %g; judge: %s)\n", score,
                std::string(status_name(status)).c_str(), status == Status::kPassJudge ? "at or above" : "below",
                kJudgeThreshold, judge_description().c_str());
    return;
  }
  const JudgeCalibration calibration = calibrate_judge(judge, args.calibration);
  for (const JudgedText& text : calibration.texts)
    std::printf("%8.3f  %-7s %s|%s\n", text.score, text.fluent ? "fluent" : "garbled", text.prompt.c_str(),
                text.continuation.c_str());
  const size_t right = static_cast<size_t>(calibration.accuracy * calibration.texts.size() + 0.5);
  std::printf("best threshold %.3f: %zu of %zu right (%.1f%%)\n", calibration.threshold, right,
              calibration.texts.size(), 100 * calibration.accuracy);
  std::printf("canrun's threshold %g: %.1f%% right\n", kJudgeThreshold,
              100 * judge_accuracy(calibration.texts, kJudgeThreshold));
}

}  // namespace

void add_judge_command(CLI::App& app) {
  auto args = std::make_shared<JudgeArgs>();
  CLI::App* command = app.add_subcommand(
      "judge",
      "Score how fluent TEXT reads after --prompt: the mean log-probability per token that the judge model\n"
      "(SmolLM2-135M-Instruct, run by canrun) gives it; the lab's threshold makes PASS_JUDGE or FAIL_JUDGE.\n"
      "With --calibrate FILE, score a JSON-lines set of texts marked fluent or not and print the threshold\n"
      "that separates them best and its accuracy (data/judge_calibration.jsonl is the lab's).");
  command->add_option("text", args->text, "The continuation to score");
  command->add_option("--prompt", args->prompt, "The text it continues (default: none)");
  command->add_option("--calibrate", args->calibration, "A JSON-lines file of {prompt, continuation, fluent}")
      ->check(regular_file_check());
  command->add_option("--model", args->model_dir,
                      "The judge model's folder (default: $CANRUN_JUDGE_MODEL, else models/SmolLM2-135M-Instruct "
                      "of the source tree, made by tools/fetch_smollm2.sh)");
  command->callback([args] { run(*args); });
}

}  // namespace canrun
