#include "lab/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "util/error.h"
#include "util/json.h"
#include "util/version.h"

namespace canrun {

// A calibration set is a few hundred short texts, one JSON object a line.
constexpr size_t kMaxCalibrationBytes = size_t{64} << 20;

std::string default_judge_model_dir() {
  const char* dir = std::getenv("CANRUN_JUDGE_MODEL");
  if (dir && *dir) return dir;
  return std::string(CANRUN_MODELS_DIR) + "/SmolLM2-135M-Instruct";
}

std::string judge_description(double threshold) {
  char text[128];
  std::snprintf(text, sizeof(text), "SmolLM2-135M-Instruct, canrun %s, mean log-prob >= %g", kVersion, threshold);
  return text;
}

Judge::Judge(const std::string& model_dir)
    : tokenizer_(Tokenizer::from_file((std::filesystem::path(model_dir) / "tokenizer.json").string())),
      session_(model_dir, SessionOptions{}) {}

double Judge::score(const std::string& prompt, const std::string& continuation) {
  std::vector<int32_t> ids = tokenizer_.encode(prompt).ids;
  const std::vector<int32_t> next = tokenizer_.encode(continuation, /*add_special_tokens=*/false).ids;
  // With nothing before it (an empty prompt without special tokens), the first token is context.
  const size_t first = ids.empty() ? 1 : 0;
  if (next.size() <= first) fail(ErrorKind::kUsage, "judge: the continuation is too short to score");
  if (first) ids.push_back(next[0]);
  GenerateRequest request;
  request.max_new_tokens = 0;  // the prompt's forward pass only: its last position's logits
  double total = 0;
  for (size_t i = first; i < next.size(); ++i) {
    const int32_t id = next[i];
    const std::vector<float> logits = session_.generate(ids, request).prompt_logits;
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float logit : logits) sum += std::exp(static_cast<double>(logit - top));
    total += static_cast<double>(logits.at(static_cast<size_t>(id)) - top) - std::log(sum);
    ids.push_back(id);
  }
  return total / static_cast<double>(next.size() - first);
}

double judge_accuracy(const std::vector<JudgedText>& texts, double threshold) {
  if (texts.empty()) return 0;
  const auto right = std::count_if(texts.begin(), texts.end(),
                                   [&](const JudgedText& text) { return (text.score >= threshold) == text.fluent; });
  return static_cast<double>(right) / static_cast<double>(texts.size());
}

JudgeCalibration calibrate_judge(Judge& judge, const std::string& path) {
  std::istringstream in(read_text_file(path, kMaxCalibrationBytes));
  JudgeCalibration calibration;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    const Json json = parse_json(line, where, ErrorKind::kUsage);
    JudgedText text;
    try {
      text.prompt = json.at("prompt").get<std::string>();
      text.continuation = json.at("continuation").get<std::string>();
      text.fluent = json.at("fluent").get<bool>();
    } catch (const Json::exception& e) {
      fail(ErrorKind::kUsage, where + ": needs \"prompt\" and \"continuation\" strings and \"fluent\" true or false (" +
                                  e.what() + ")");
    }
    text.score = judge.score(text.prompt, text.continuation);
    calibration.texts.push_back(std::move(text));
  }
  if (calibration.texts.empty()) fail(ErrorKind::kUsage, path + ": no texts to calibrate on");
  // Candidate thresholds: midpoints between neighbouring scores; the most accurate wins.
  std::vector<double> scores;
  for (const JudgedText& text : calibration.texts) scores.push_back(text.score);
  std::sort(scores.begin(), scores.end());
  calibration.threshold = scores.front();
  calibration.accuracy = judge_accuracy(calibration.texts, calibration.threshold);
  for (size_t i = 1; i < scores.size(); ++i) {
    const double candidate = (scores[i - 1] + scores[i]) / 2;
    const double accuracy = judge_accuracy(calibration.texts, candidate);
    if (accuracy > calibration.accuracy) calibration = {calibration.texts, candidate, accuracy};
  }
  return calibration;
}

}  // namespace canrun
