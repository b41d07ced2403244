#include "lab/torch_runner.h"

#include <algorithm>
#include <mutex>

#include "lab/check.h"
#include "lab/child_process.h"
#include "lab/encoder_check.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

const std::vector<std::string> kDevices = {"cpu", "cuda", "neuron"};
const std::vector<std::string> kCompileBackends = {"none", "inductor", "neuron"};
// What run.py imports, directly or through transformers (accelerate: for a sharded load;
// torchvision and PIL: the image processors and the check image of image-text-to-text), by module.
// sentence_transformers: an encoder's check; peft: a training check's LoRA adapters.
const std::vector<std::string> kProbedPackages = {"torch",       "transformers", "tokenizers",           "safetensors",
                                                  "huggingface_hub", "accelerate", "torchvision", "PIL",
                                                  "sentence_transformers", "peft"};

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

TorchStack probe(const std::string& python) {
  std::string code =
      "import importlib, json, platform\n"
      "found = {'python': platform.python_version()}\n"
      "for name in " + Json(kProbedPackages).dump() + ":\n"
      "    try:\n"
      "        found[name] = importlib.import_module(name).__version__\n"
      "    except Exception as error:\n"
      "        found[name] = None\n"
      "        found[name + '_error'] = str(error)\n"
      "print(json.dumps(found))\n";
  const ChildOutcome outcome = run_to_end({python, "-c", code}, 300);
  const std::string where = "--python " + python;
  if (outcome.exit_code != 0)
    fail(ErrorKind::kUsage, where + ": could not run it (" +
                                (outcome.timed_out ? std::string("no answer within 300 s")
                                                   : "exit " + std::to_string(outcome.exit_code) + ": " +
                                                         last_line(outcome.err)) +
                                ")");
  const Json found = parse_json(last_line(outcome.out), where + " version probe", ErrorKind::kUsage);
  TorchStack stack;
  stack.python_version = found.value("python", "");
  for (const std::string& name : kProbedPackages) {
    if (found.contains(name) && found[name].is_string()) {
      stack.packages[name] = found[name].get<std::string>();
    } else if (name == "torch" || name == "transformers") {
      fail(ErrorKind::kUsage, where + " cannot import " + name + " (" + found.value(name + "_error", "") +
                                  "): the torch runner needs torch and transformers there, e.g. "
                                  "pip install -r tests/requirements-torch.txt");
    }
  }
  return stack;
}

std::vector<int32_t> id_list(const Json& json, const std::string& key) {
  if (!json.contains(key)) fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is missing");
  try {
    return json[key].get<std::vector<int32_t>>();
  } catch (const Json::exception&) {
    fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is not a list of token ids");
  }
}

std::vector<std::vector<int32_t>> top_lists(const Json& json, const std::string& key, size_t tokens) {
  if (!json.contains(key)) fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is missing");
  std::vector<std::vector<int32_t>> lists;
  try {
    lists = json[key].get<std::vector<std::vector<int32_t>>>();
  } catch (const Json::exception&) {
    fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' is not a list of id lists");
  }
  if (lists.size() != tokens)
    fail(ErrorKind::kRuntime, "run.py output: field '" + key + "' has " + std::to_string(lists.size()) +
                                  " entries for " + std::to_string(tokens) + " tokens");
  return lists;
}

// `value` as a Python literal: JSON's strings and numbers as they are (ASCII escapes), true,
// false and null as Python spells them.
std::string python_literal(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_null()) return "None";
  if (!value.is_structured()) return value.dump(-1, ' ', true);
  std::string text = value.is_object() ? "{" : "[";
  for (const auto& [key, item] : value.items())
    text += (text.size() > 1 ? ", " : "") + (value.is_object() ? Json(key).dump(-1, ' ', true) + ": " : "") +
            python_literal(item);
  return text + (value.is_object() ? "}" : "]");
}

}  // namespace

Runner parse_runner(const std::string& name) {
  if (name == "canrun") return Runner::kCanrun;
  if (name == "torch") return Runner::kTorch;
  fail(ErrorKind::kUsage, "--runner '" + name + "': expected canrun or torch");
}

void validate_torch_options(const TorchOptions& options) {
  if (!contains(kDevices, options.device))
    fail(ErrorKind::kUsage, "--device '" + options.device + "': expected one of " + joined(kDevices));
  if (!contains(kCompileBackends, options.compile))
    fail(ErrorKind::kUsage, "--compile '" + options.compile + "': expected one of " + joined(kCompileBackends));
  if (options.compile == "neuron" && options.device != "neuron")
    fail(ErrorKind::kUsage, "--compile neuron compiles for the Neuron device only: add --device neuron");
  if (options.python.empty()) fail(ErrorKind::kUsage, "--python: empty interpreter path");
}

std::string public_version(const std::string& version) { return version.substr(0, version.find('+')); }

std::vector<std::string> torch_requirements(const TorchStack& stack) {
  std::vector<std::string> pins;
  for (const auto& [module, version] : stack.packages)
    pins.push_back((module == "PIL" ? "pillow" : module == "sentence_transformers" ? "sentence-transformers" : module) +
                   "==" + public_version(version));
  return pins;
}

std::string torch_dtype(const TorchOptions& options) { return options.device == "cpu" ? "float32" : "bfloat16"; }

const TorchStack& probe_torch_stack(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, TorchStack> probed;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = probed.find(python);
  if (found == probed.end()) found = probed.emplace(python, probe(python)).first;
  return found->second;
}

VersionPair torch_version_pair(const TorchStack& stack, const TorchOptions& options) {
  const std::string backend = options.compile == "none" ? "eager" : options.compile;
  return {"torch-" + public_version(stack.packages.at("torch")) + "+" + backend + "-" + options.device,
          "transformers-" + public_version(stack.packages.at("transformers"))};
}

std::vector<StackComponent> torch_software_stack(const TorchStack& stack, const TorchOptions& options) {
  std::vector<StackComponent> components = {
      {"runner", "torch (run.py: from_pretrained, static cache, greedy), verified against torch cpu eager float32"},
      {"device", options.device},
      {"compile", options.compile == "none" ? "none (eager)" : "torch.compile backend " + options.compile},
      {"dtype", torch_dtype(options)},
      {"python", stack.python_version},
  };
  for (const auto& [name, version] : stack.packages) components.push_back({name, version});
  return components;
}

std::string runner_script(const std::string& template_name, const Json& parameters) {
  const std::string template_path = std::string(CANRUN_RUNNERS_DIR) + "/" + template_name;
  std::string script = read_text_file(template_path);
  const std::string start_marker = "PARAMETERS = {\n";
  const size_t start = script.find(start_marker);
  const size_t end = start == std::string::npos ? start : script.find("\n}\n", start);
  if (end == std::string::npos) fail(ErrorKind::kIo, template_path + ": no PARAMETERS = {...} block to fill in");
  std::string literal = "{\n";
  for (const auto& [key, value] : parameters.items()) literal += "    " + Json(key).dump() + ": " + python_literal(value) + ",\n";
  literal += "}";
  return script.substr(0, start) + "PARAMETERS = " + literal + script.substr(end + 2);
}

std::string torch_run_script(const TorchScriptParameters& parameters) {
  return runner_script("torch_run.py", {
                                           {"model_dir", parameters.model_dir},
                                           {"device", parameters.options.device},
                                           {"compile", parameters.options.compile},
                                           {"dtype", torch_dtype(parameters.options)},
                                           {"cores", parameters.cores},
                                           {"task", parameters.task},
                                           {"prompt", kCheckPrompt},
                                           {"instruction", kCheckInstruction},
                                           {"new_tokens", kCheckNewTokens},
                                           {"top_k", kTopK},
                                           {"sentences", check_sentences()},
                                           {"query", kCheckQuery},
                                           {"documents", check_documents()},
                                       });
}

Json run_py_result(const std::string& output) {
  const std::string line = last_line(output);
  if (line.empty()) fail(ErrorKind::kRuntime, "run.py printed no JSON result line");
  Json json;
  try {
    json = Json::parse(line);
  } catch (const Json::exception&) {
    fail(ErrorKind::kRuntime, "run.py's last line is not JSON: " + line.substr(0, 200));
  }
  if (!json.is_object()) fail(ErrorKind::kRuntime, "run.py's result is not a JSON object");
  return json;
}

std::optional<TorchRunOutput::Failure> run_py_failure(const Json& result) {
  if (!result.contains("error")) return std::nullopt;
  const Json& error = result["error"];
  if (!error.is_object() || !error.contains("stage") || !error.contains("message"))
    fail(ErrorKind::kRuntime, "run.py output: field 'error' needs 'stage' and 'message'");
  return TorchRunOutput::Failure{error.value("stage", ""), error.value("type", ""), error.value("message", "")};
}

TorchRunOutput parse_torch_output(const std::string& output) {
  const Json json = run_py_result(output);
  TorchRunOutput run;
  run.load_time_s = run_py_optional<double>(json, "load_time_s", "a number");
  run.compile_time_s = run_py_optional<double>(json, "compile_time_s", "a number");
  run.recompilations = run_py_optional<int32_t>(json, "recompilations", "an integer");
  run.graph_breaks = run_py_optional<int32_t>(json, "graph_breaks", "an integer");
  run.eager_fallback = run_py_optional<bool>(json, "eager_fallback", "true or false");
  run.peak_device_memory_bytes = run_py_optional<int64_t>(json, "peak_device_memory_bytes", "an integer");
  run.text = run_py_optional<std::string>(json, "text", "a string");
  run.failure = run_py_failure(json);
  if (run.failure) return run;
  run.sentences_per_s = run_py_optional<double>(json, "sentences_per_s", "a number");
  if (json.contains("embeddings")) {
    run.embeddings = run_py_field<std::vector<std::vector<double>>>(json, "embeddings", "a list of embeddings");
    run.reference_embeddings =
        run_py_field<std::vector<std::vector<double>>>(json, "reference_embeddings", "a list of embeddings");
    return run;
  }
  if (json.contains("scores")) {
    run.scores = run_py_field<std::vector<double>>(json, "scores", "a list of numbers");
    run.reference_scores = run_py_field<std::vector<double>>(json, "reference_scores", "a list of numbers");
    return run;
  }
  run.tested.tokens = id_list(json, "tokens");
  run.tested.top_ids = top_lists(json, "top_ids", run.tested.tokens.size());
  run.reference.tokens = id_list(json, "reference_tokens");
  run.reference.top_ids = top_lists(json, "reference_top_ids", run.reference.tokens.size());
  return run;
}

}  // namespace canrun
