// The torch runner: a check of a checkpoint on PyTorch and Transformers instead of canrun's own
// engine. canrun writes a standalone run.py (runners/torch_run.py with this row's parameters),
// runs it with the chosen Python, and reads the JSON it prints into a row of the usual schema,
// in a version pair named after the stack (torch-2.15.0+inductor-cpu__transformers-5.23.0).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lab/dataset.h"
#include "lab/verify.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {

// Which engine a check runs the tested half on.
enum class Runner { kCanrun, kTorch };

// --runner: "canrun" or "torch"; a usage error naming the option otherwise.
Runner parse_runner(const std::string& name);

struct TorchOptions {
  std::string device = "cpu";    // cpu | cuda | neuron
  std::string compile = "none";  // none | inductor | neuron (torch.compile's backend)
  std::string python = "python3";  // the interpreter with torch and transformers
};

// Usage errors naming --device or --compile for a value not in its list or a pair that does
// not go together (the neuron backend compiles only for the neuron device).
void validate_torch_options(const TorchOptions& options);

// "float32" on cpu; "bfloat16" on cuda and neuron, as those devices are used.
std::string torch_dtype(const TorchOptions& options);

// The Python packages the runner found, with their versions ("torch" -> "2.15.0+cu132").
struct TorchStack {
  std::string python_version;
  // torch, transformers and, those installed, tokenizers, safetensors, huggingface_hub, accelerate
  std::map<std::string, std::string> packages;
};

// Asks `python` for its versions (once per interpreter and process); a usage error naming
// --python when it cannot import torch or transformers.
const TorchStack& probe_torch_stack(const std::string& python);

// The version without its local part (PEP 440): 2.15.0 for 2.15.0+cu132; what pip installs by.
std::string public_version(const std::string& version);

// The packages found, pinned as pip installs them ("torch==2.15.0", "pillow==13.0.0" for PIL).
std::vector<std::string> torch_requirements(const TorchStack& stack);

// torch-<version without its local part>+<backend>-<device> / transformers-<version>; the
// backend "none" is named "eager".
VersionPair torch_version_pair(const TorchStack& stack, const TorchOptions& options);

// The row's software_stack for a torch run.
std::vector<StackComponent> torch_software_stack(const TorchStack& stack, const TorchOptions& options);

struct TorchScriptParameters {
  std::string model_dir;
  TorchOptions options;
  int cores = 1;
  std::string task = "text-generation";  // image-text-to-text: the check image and instruction
};

// runners/TEMPLATE_NAME with its PARAMETERS = {...} block replaced by `parameters` (an object)
// as a Python literal: the standalone run.py of one row.
std::string runner_script(const std::string& template_name, const Json& parameters);

// run.py for these parameters: runners/torch_run.py with its PARAMETERS filled in.
std::string torch_run_script(const TorchScriptParameters& parameters);

// What run.py printed.
struct TorchRunOutput {
  struct Failure {
    std::string stage;  // device, load, prompt, compile, generate, reference (or import)
    std::string type;   // the exception's class name
    std::string message;
  };
  std::optional<Failure> failure;
  GenerationTrace tested;
  GenerationTrace reference;
  std::optional<std::string> text;
  std::optional<double> load_time_s;
  std::optional<double> compile_time_s;
  std::optional<int32_t> recompilations;
  std::optional<int32_t> graph_breaks;
  std::optional<bool> eager_fallback;
  std::optional<int64_t> peak_device_memory_bytes;
  // An encoder's run (sentence-transformers): the tested and the reference embeddings, one list
  // per check sentence, or the first score of each check document; and the measured pass's rate.
  std::optional<std::vector<std::vector<double>>> embeddings, reference_embeddings;
  std::optional<std::vector<double>> scores, reference_scores;
  std::optional<double> sentences_per_s;
};

// The JSON object on the last line of a run.py's standard output; throws Error(kRuntime) when
// there is none.
Json run_py_result(const std::string& output);

// A field of run.py's result: absent or null reads as nullopt; another type than T throws
// Error(kRuntime) naming the field and `type_name`.
template <typename T>
std::optional<T> run_py_optional(const Json& json, const std::string& key, const char* type_name) {
  if (!json.contains(key) || json[key].is_null()) return std::nullopt;
  try {
    return json[key].get<T>();
  } catch (const Json::exception&) {
    fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is not " + type_name);
  }
}

// A field run.py's result must hold: absent throws too.
template <typename T>
T run_py_field(const Json& json, const std::string& key, const char* type_name) {
  if (!json.contains(key)) fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is missing");
  return *run_py_optional<T>(json, key, type_name);
}

// The failure the result's "error" field names; nullopt when it has none.
std::optional<TorchRunOutput::Failure> run_py_failure(const Json& result);

// Reads the last line of run.py's standard output (an encoder's: embeddings or scores instead of
// tokens); throws Error(kRuntime) naming what is
// missing or malformed: no JSON, JSON that is not an object, a field absent or of the wrong type.
TorchRunOutput parse_torch_output(const std::string& output);

}  // namespace canrun
