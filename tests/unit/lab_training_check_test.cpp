// The training check's parts that run without torch: its run.py's parameters, the reading of
// what run.py prints, the verdict against the reference and the restart check, and canrun's own
// step-0 loss. tests/e2e/test_training_check.py runs the whole check with torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "lab/status.h"
#include "lab/training_check.h"
#include "runtime/session.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

const std::string kLlama = std::string(CANRUN_SOURCE_DIR) + "/tests/fixtures/models/llama_f32";

// What run.py prints for 4 steps, restarting after step 2, with the tested run equal to the
// reference's.
Json run_output() {
  return {{"load_time_s", 1.5},
          {"losses", {3.0, 2.5, 2.25, 2.0}},
          {"grad_norms", {10.0, 8.0, 6.0, 4.0}},
          {"step_times_s", {4.0, 0.5, 0.25, 1.0}},
          {"reference_losses", {3.0, 2.5, 2.25, 2.0}},
          {"reference_grad_norms", {10.0, 8.0, 6.0, 4.0}},
          {"restart_step", 2},
          {"resumed_losses", {2.25, 2.0}},
          {"tokens_per_step", 100},
          {"peak_host_memory_bytes", 1 << 30},
          {"step0_batches", {{{"ids", {{1, 2, 3}}}, {"labels", {{-100, 2, 3}}}}}}};
}

TrainRunOutput parsed(const Json& output) { return parse_train_output("Loading...\n" + output.dump() + "\n"); }

ResultRow recorded(const Json& output, const std::string& device = "cpu", std::optional<double> native = 3.0) {
  ResultRow row;
  record_training_run(parsed(output), device, "float32", "none", native, row);
  return row;
}

void expect_parse_error(const Json& output, const std::string& fragment) {
  try {
    parsed(output);
    FAIL() << "no error for " << fragment;
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(TrainingCheck, AnAgreeingRunPassesWithItsTimesAndTheRestartBitIdentical) {
  const ResultRow row = recorded(run_output());
  EXPECT_EQ(row.result, "PASS");
  EXPECT_FALSE(row.error_message);
  EXPECT_EQ(row.train_steps, 4);
  EXPECT_EQ(row.restart_check, "bit-identical");
  EXPECT_EQ(row.restart_step, 2);
  EXPECT_EQ(row.first_step_outside, std::nullopt);
  EXPECT_EQ(row.first_step_time_s, 4.0);
  // The steady steps 0.5, 0.25, 1.0: median 0.5, 95th percentile 1.0, 300 tokens in 1.75 s.
  EXPECT_EQ(row.step_time_p50_s, 0.5);
  EXPECT_EQ(row.step_time_p95_s, 1.0);
  EXPECT_DOUBLE_EQ(*row.train_tokens_per_s, 300 / 1.75);
  EXPECT_FALSE(row.compile_time_s);  // eager: nothing compiled
  EXPECT_EQ(row.loss_tolerance, 1e-3);
  EXPECT_EQ(row.peak_host_memory_bytes, 1 << 30);
}

TEST(TrainingCheck, TheFirstStepOutsideItsToleranceFailsTheRowByName) {
  Json output = run_output();
  output["losses"][2] = 2.25 * (1 + 2e-3);  // past float32's 1e-3 after step 0
  output["losses"][3] = 9.0;
  output["resumed_losses"] = {output["losses"][2], 9.0};
  const ResultRow row = recorded(output);
  EXPECT_EQ(row.result, "FAIL_MISMATCH");
  EXPECT_EQ(row.first_step_outside, 2);
  EXPECT_NE(row.error_message->find("step 2's loss"), std::string::npos) << *row.error_message;

  Json first = run_output();
  first["losses"][0] = 3.0 * (1 + 2e-4);  // inside 1e-3, outside step 0's 1e-4
  EXPECT_EQ(recorded(first).first_step_outside, 0);
  Json inside = run_output();
  inside["losses"][1] = 2.5 * (1 + 5e-4);
  EXPECT_EQ(recorded(inside).result, "PASS");
  // A loss near zero is measured against step 0's: 2e-3 off a reference of 0.01 is 2e-3 / 3.0.
  Json small = run_output();
  small["reference_losses"][3] = 0.01;
  small["losses"][3] = 0.012;
  small["resumed_losses"][1] = 0.012;
  EXPECT_EQ(recorded(small).result, "PASS");
  small["losses"][3] = 0.02;
  small["resumed_losses"][1] = 0.02;
  EXPECT_EQ(recorded(small).first_step_outside, 3);
}

TEST(TrainingCheck, StepZerosGradientNormAndCanrunsOwnLossAreChecked) {
  Json norm = run_output();
  norm["grad_norms"][0] = 10.01;
  ResultRow row = recorded(norm);
  EXPECT_EQ(row.result, "FAIL_MISMATCH");
  EXPECT_NE(row.error_message->find("gradient norm"), std::string::npos) << *row.error_message;

  row = recorded(run_output(), "cpu", 3.01);
  EXPECT_EQ(row.result, "FAIL_MISMATCH");
  EXPECT_NE(row.error_message->find("canrun's own engine"), std::string::npos) << *row.error_message;
  EXPECT_EQ(row.native_step0_loss, 3.01);
}

TEST(TrainingCheck, ARestartThatDiffersFailsOnCpuAndIsWithinToleranceElsewhere) {
  Json output = run_output();
  output["resumed_losses"] = {2.25, 2.0000001};
  ResultRow row = recorded(output);
  EXPECT_EQ(row.restart_check, "differs");
  EXPECT_EQ(row.result, "FAIL_MISMATCH");
  EXPECT_NE(row.error_message->find("restarting from step 2"), std::string::npos) << *row.error_message;

  row = recorded(output, "cuda");
  EXPECT_EQ(row.restart_check, "within tolerance (the device is not deterministic)");
  EXPECT_EQ(row.result, "PASS");
  output["resumed_losses"] = {2.25, 3.0};
  EXPECT_EQ(recorded(output, "cuda").restart_check, "differs");
}

TEST(TrainingCheck, AFailedStageIsTheRowsFailureNamingIt) {
  const Json output = {{"error", {{"stage", "backward"}, {"type", "RuntimeError"}, {"message", "broken"}}}};
  ResultRow row = recorded(output);
  EXPECT_EQ(row.result, "FAIL_RUNTIME");
  EXPECT_EQ(row.error_type, "RuntimeError");
  EXPECT_EQ(row.error_message, "backward: broken");
  EXPECT_FALSE(row.train_losses);
  const Json compile = {{"error", {{"stage", "compile"}, {"type", "BackendCompilerFailed"}, {"message", "x"}}}};
  EXPECT_EQ(recorded(compile).result, "FAIL_COMPILE");
}

TEST(TrainingCheck, MalformedOutputIsNamed) {
  Json output = run_output();
  output.erase("reference_losses");
  expect_parse_error(output, "'reference_losses' is missing");
  output = run_output();
  output["grad_norms"] = {1.0};
  expect_parse_error(output, "'grad_norms' has 1 entries for 4 steps");
  output = run_output();
  output["resumed_losses"] = {1.0};
  expect_parse_error(output, "'resumed_losses' has 1 entries after restart_step 2 of 4 steps");
  output = run_output();
  output["step0_batches"][0]["labels"] = {{1, 2}};
  expect_parse_error(output, "labels do not match its ids");
  output = run_output();
  output["losses"] = "many";
  expect_parse_error(output, "'losses' is not a list of numbers");
  try {
    parse_train_output("Traceback ...\n");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("not JSON"), std::string::npos) << error.what();
  }
}

TEST(TrainingCheck, RunScriptIsPythonWithTheSetupAndTheCommittedExamples) {
  TorchOptions torch;
  torch.device = "cuda";
  TrainOptions train;
  train.lora = true;
  train.dtype = "bfloat16";
  train.steps = 8;
  const std::string script = torch_train_script("/models/m", torch, train);
  EXPECT_NE(script.find("\"lora\": True"), std::string::npos);
  EXPECT_NE(script.find("\"restart_step\": 4"), std::string::npos);
  TemporaryDirectory dir("torch-train-test-");
  const std::string path = (dir.path() / "run.py").string();
  std::ofstream(path) << script;
  const std::string command =
      "python3 -c \"import ast,sys; tree = ast.parse(open(sys.argv[1]).read()); "
      "p = ast.literal_eval([n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "
      "'PARAMETERS'][0].value); sys.exit(0 if (p['device'], p['dtype'], p['lora'], p['steps'], len(p['examples'])) == "
      "('cuda', 'bfloat16', True, 8, " + std::to_string(training_examples().size()) + ") else 1)\" " + path;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_GE(training_examples().size(), 8u);
}

TEST(TrainingCheck, OptionsOutOfRangeAreUsageErrorsNamingTheOption) {
  for (auto [change, option] : std::vector<std::pair<void (*)(TrainOptions&), std::string>>{
           {[](TrainOptions& t) { t.steps = 0; }, "--steps 0"},
           {[](TrainOptions& t) { t.batch_size = -1; }, "--batch-size -1"},
           {[](TrainOptions& t) { t.sequence_length = 0; }, "--seq-len 0"},
           {[](TrainOptions& t) { t.gradient_accumulation = 0; }, "--grad-accum 0"},
           {[](TrainOptions& t) { t.dtype = "float16"; }, "--dtype 'float16'"}}) {
    TrainOptions train;
    change(train);
    try {
      validate_train_options(train);
      FAIL() << "no error for " << option;
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(error.what()).find(option), std::string::npos) << error.what();
    }
  }
  TrainOptions changed;
  changed.steps = 4;
  changed.lora = true;
  EXPECT_EQ(training_arguments(changed), (std::vector<std::string>{"--workload", "train", "--steps", "4", "--lora"}));
}

// Step 0's loss on canrun's engine: the mean over labelled tokens of -log softmax, each token
// predicted from the logits after the one before; per micro-batch, then over the micro-batches.
TEST(TrainingCheck, NativeLossIsTheMeanCrossEntropyOfTheLabelledTokens) {
  Session session(kLlama, uncompiled(Backend::kRef));
  const std::vector<int32_t> ids = {1, 17, 42, 99, 7};
  const std::vector<float> logits = session.logits_after_each(ids);
  const size_t vocab = logits.size() / ids.size();
  const auto nll = [&](size_t after, int32_t token) {
    double sum = 0;
    for (size_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[after * vocab + v]));
    return std::log(sum) - logits[after * vocab + static_cast<size_t>(token)];
  };
  TrainRunOutput::Batch one{{ids}, {{-100, -100, 42, -100, 7}}};
  EXPECT_NEAR(native_step0_loss(session, {one}), (nll(1, 42) + nll(3, 7)) / 2, 1e-6);
  TrainRunOutput::Batch other{{{1, 17}}, {{-100, 17}}};
  EXPECT_NEAR(native_step0_loss(session, {one, other}), ((nll(1, 42) + nll(3, 7)) / 2 + nll(0, 17)) / 2, 1e-6);
  TrainRunOutput::Batch unlabelled{{{1, 17}}, {{-100, -100}}};
  EXPECT_THROW(native_step0_loss(session, {unlabelled}), Error);
}

}  // namespace
}  // namespace canrun
