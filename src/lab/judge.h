// The judge: how fluent a generated continuation reads, scored by a small model canrun runs
// itself, SmolLM2-135M-Instruct: the mean log-probability per token of the continuation given
// the prompt. It decides rows whose tokens cannot be compared with the reference exactly (a
// sharded or bfloat16 run on real weights): PASS_JUDGE at or above the threshold, else
// FAIL_JUDGE. The threshold comes from data/judge_calibration.jsonl (canrun judge --calibrate).
#pragma once

#include <string>
#include <vector>

#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace canrun {

// Calibrated with `canrun judge --calibrate data/judge_calibration.jsonl` (docs/lab.md, "The judge": its accuracy).
inline constexpr double kJudgeThreshold = -4.5;

// $CANRUN_JUDGE_MODEL, else models/SmolLM2-135M-Instruct of the source tree canrun was built
// from (tools/fetch_smollm2.sh makes it).
std::string default_judge_model_dir();

// "SmolLM2-135M-Instruct, canrun 0.1.0, mean log-prob >= -4.5": the row's `judge` column.
std::string judge_description(double threshold = kJudgeThreshold);

class Judge {
 public:
  explicit Judge(const std::string& model_dir);

  // Mean natural-log probability per token of `continuation` after `prompt`, each encoded by
  // the judge's tokenizer (the prompt with its special tokens). Throws Error(kUsage) for an empty
  // continuation.
  double score(const std::string& prompt, const std::string& continuation);

 private:
  Tokenizer tokenizer_;
  Session session_;
};

struct JudgedText {
  std::string prompt;
  std::string continuation;
  bool fluent = false;
  double score = 0;
};

struct JudgeCalibration {
  std::vector<JudgedText> texts;  // scored
  double threshold = 0;           // the midpoint that classifies the most texts right
  double accuracy = 0;            // of that threshold, over all texts
};

// Scores a JSON-lines file of {"prompt", "continuation", "fluent"} and finds the threshold.
// Errors name the file, line and field.
JudgeCalibration calibrate_judge(Judge& judge, const std::string& path);

// The share of `texts` the threshold classifies right (fluent: score >= threshold).
double judge_accuracy(const std::vector<JudgedText>& texts, double threshold);

}  // namespace canrun
