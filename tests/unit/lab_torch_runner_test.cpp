// The torch runner's pieces that need no torch: its options, the version pair it names, the
// run.py it writes (valid Python with the row's parameters), and how it reads run.py's output,
// including output that is missing or malformed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <fstream>

#include "lab/reproduce.h"
#include "lab/torch_runner.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(TorchRunner, OptionsAreCheckedByName) {
  EXPECT_EQ(parse_runner("torch"), Runner::kTorch);
  EXPECT_EQ(parse_runner("canrun"), Runner::kCanrun);
  EXPECT_NE(error_of([] { parse_runner("tensorflow"); }).find("--runner 'tensorflow'"), std::string::npos);
  TorchOptions options;
  options.device = "tpu";
  EXPECT_NE(error_of([&] { validate_torch_options(options); }).find("--device 'tpu'"), std::string::npos);
  options.device = "cpu";
  options.compile = "xla";
  EXPECT_NE(error_of([&] { validate_torch_options(options); }).find("--compile 'xla'"), std::string::npos);
  options.compile = "neuron";
  EXPECT_NE(error_of([&] { validate_torch_options(options); }).find("--device neuron"), std::string::npos);
  options.device = "neuron";
  EXPECT_EQ(error_of([&] { validate_torch_options(options); }), "");
}

TEST(TorchRunner, VersionPairNamesTheStackWithoutLocalVersions) {
  TorchStack stack;
  stack.packages = {{"torch", "2.15.0+cu132"}, {"transformers", "5.23.0"}};
  TorchOptions options;
  VersionPair pair = torch_version_pair(stack, options);
  EXPECT_EQ(pair.compiler, "torch-2.15.0+eager-cpu");
  EXPECT_EQ(pair.library, "transformers-5.23.0");
  options.compile = "inductor";
  options.device = "cuda";
  EXPECT_EQ(torch_version_pair(stack, options).compiler, "torch-2.15.0+inductor-cuda");
  EXPECT_EQ(torch_dtype(options), "bfloat16");
  EXPECT_EQ(dataset_file_name(pair), "torch-2.15.0+eager-cpu__transformers-5.23.0.parquet");
}

TEST(TorchRunner, RunScriptIsPythonWithTheRowsParameters) {
  TorchScriptParameters parameters;
  parameters.model_dir = "/models/it's \"here\"";
  parameters.options.device = "cuda";
  parameters.options.compile = "inductor";
  parameters.cores = 4;
  parameters.task = "image-text-to-text";
  const std::string script = torch_run_script(parameters);
  EXPECT_NE(script.find("\"device\": \"cuda\""), std::string::npos);
  EXPECT_NE(script.find("\"task\": \"image-text-to-text\""), std::string::npos);
  EXPECT_NE(script.find("\"instruction\": \"Describe this image.\""), std::string::npos);
  EXPECT_NE(script.find("\"compile\": \"inductor\""), std::string::npos);
  EXPECT_NE(script.find("\"cores\": 4"), std::string::npos);
  EXPECT_NE(script.find("\"dtype\": \"bfloat16\""), std::string::npos);
  TemporaryDirectory dir("torch-run-test-");
  const std::string path = (dir.path() / "run.py").string();
  std::ofstream(path) << script;
  // The filled-in script parses, and its PARAMETERS hold the folder exactly.
  const std::string command = "python3 -c \"import ast,sys; tree = ast.parse(open(sys.argv[1]).read()); "
                              "p = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "
                              "'PARAMETERS'][0]; sys.exit(0 if ast.literal_eval(p.value)['model_dir'] == "
                              "sys.argv[2] else 1)\" " + path + " '/models/it'\\''s \"here\"'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// The neuron path cannot run here: its run.py is read instead. It asks for the Neuron device in
// bfloat16, compiles with the neuron backend, and imports torch_neuronx, which registers both.
TEST(TorchRunner, NeuronRunScriptAsksForTheNeuronDeviceAndBackend) {
  TorchScriptParameters parameters;
  parameters.model_dir = "/models/m";
  parameters.options.device = "neuron";
  parameters.options.compile = "neuron";
  parameters.cores = 2;
  const std::string script = torch_run_script(parameters);
  EXPECT_NE(script.find("\"device\": \"neuron\""), std::string::npos);
  EXPECT_NE(script.find("\"compile\": \"neuron\""), std::string::npos);
  EXPECT_NE(script.find("\"dtype\": \"bfloat16\""), std::string::npos);
  EXPECT_NE(script.find("import torch_neuronx"), std::string::npos);
  EXPECT_NE(script.find("torch.compile(model.forward, backend=params[\"compile\"]"), std::string::npos);
  EXPECT_NE(script.find("DistributedConfig(tp_plan=\"auto\")"), std::string::npos);
  TorchStack stack;
  stack.packages = {{"torch", "2.9.0"}, {"transformers", "5.23.0"}};
  EXPECT_EQ(torch_version_pair(stack, parameters.options).compiler, "torch-2.9.0+neuron-neuron");
}

TEST(TorchRunner, RequirementsArePipPinsWithoutLocalVersions) {
  TorchStack stack;
  stack.packages = {{"torch", "2.15.0+cu132"}, {"PIL", "13.0.0"}, {"torchvision", "0.29.2+cu132"}};
  EXPECT_EQ(torch_requirements(stack),
            (std::vector<std::string>{"pillow==13.0.0", "torch==2.15.0", "torchvision==0.29.2"}));
}

TEST(TorchRunner, ReadsTokensTopIdsAndMeasures) {
  const TorchRunOutput run = parse_torch_output(
      "Loading weights\n{\"tokens\": [5, 6], \"top_ids\": [[5, 1], [6, 2]], \"reference_tokens\": [5, 7], "
      "\"reference_top_ids\": [[5, 1], [7, 6]], \"load_time_s\": 1.5, \"compile_time_s\": 2.0, "
      "\"recompilations\": 0, \"graph_breaks\": 3, \"eager_fallback\": false, \"text\": \"hi\"}\n");
  EXPECT_FALSE(run.failure);
  EXPECT_EQ(run.tested.tokens, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(run.reference.top_ids[1], (std::vector<int32_t>{7, 6}));
  EXPECT_EQ(run.graph_breaks, 3);
  EXPECT_EQ(run.eager_fallback, false);
  EXPECT_EQ(run.compile_time_s, 2.0);
  EXPECT_FALSE(run.peak_device_memory_bytes);
  EXPECT_EQ(run.text, "hi");
}

TEST(TorchRunner, ReadsAFailedStage) {
  const TorchRunOutput run = parse_torch_output(
      "{\"error\": {\"stage\": \"device\", \"type\": \"RuntimeError\", \"message\": \"Found no NVIDIA driver\"}}");
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->stage, "device");
  EXPECT_EQ(run.failure->type, "RuntimeError");
  EXPECT_EQ(run.failure->message, "Found no NVIDIA driver");
}

TEST(TorchRunner, NamesWhatItsOutputLacks) {
  EXPECT_NE(error_of([] { parse_torch_output(""); }).find("no JSON"), std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("Traceback: boom"); }).find("not JSON"), std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("[1, 2]"); }).find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("{\"top_ids\": []}"); }).find("'tokens' is missing"), std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("{\"tokens\": [1], \"top_ids\": []}"); }).find("'top_ids' has 0"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_torch_output("{\"tokens\": [1], \"top_ids\": [[1]], \"reference_tokens\": \"x\"}");
            }).find("'reference_tokens' is not a list"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("{\"load_time_s\": \"soon\"}"); }).find("'load_time_s' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_torch_output("{\"error\": \"boom\"}"); }).find("'error' needs"), std::string::npos);
}

TEST(TorchRunner, ReproduceScriptIsValidBashAroundTheExactRunPy) {
  ReproduceInputs inputs;
  inputs.model_id = "org/model";
  inputs.weights = "real";
  inputs.origin = WeightsOrigin::kLocalFolder;
  inputs.folder = "/models/$(touch pwned)";
  inputs.expected_result = "PASS";
  inputs.version_pair = "torch-2.15.0+eager-cpu / transformers-5.23.0";
  TorchReproduceInputs torch;
  torch.run_py = torch_run_script({"/models/x", TorchOptions{}, 1});
  torch.packages = {"torch==2.15.0", "transformers==5.23.0"};
  torch.expected_tokens = std::vector<int32_t>{1, 2, 3};
  const std::string script = torch_reproduce_script(inputs, torch);
  EXPECT_NE(script.find(torch.run_py), std::string::npos);
  EXPECT_NE(script.find("pip install --quiet torch==2.15.0 transformers==5.23.0"), std::string::npos);
  // A venv made once and kept: a second run finds the pins installed.
  EXPECT_NE(script.find("[ -x .venv-canrun-torch/bin/python ] || python3 -m venv .venv-canrun-torch\n"),
            std::string::npos);
  EXPECT_NE(script.find("expected_tokens = [1, 2, 3]"), std::string::npos);
  TemporaryDirectory dir("torch-repro-test-");
  const std::string path = (dir.path() / "repro.sh").string();
  std::ofstream(path) << script;
  EXPECT_EQ(std::system(("bash -n " + path).c_str()), 0);
  EXPECT_NE(script.find("model_dir='/models/$(touch pwned)'"), std::string::npos);
}

}  // namespace
}  // namespace canrun
