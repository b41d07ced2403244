#include "lab/torch_check.h"

#include <fstream>
#include <functional>
#include <limits>

#include "lab/child_process.h"
#include "lab/encoder_check.h"
#include "lab/status.h"
#include "lab/torch_runner.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

std::string tail(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

}  // namespace

Status status_of_run_py_failure(const TorchRunOutput::Failure& failure) {
  if (failure.type == "OutOfMemoryError" || failure.type == "MemoryError") return Status::kOom;
  if (failure.stage == "load") return Status::kFailLoad;
  if (failure.stage == "compile") return Status::kFailCompile;
  return Status::kFailRuntime;
}

void record_run_py_failure(const TorchRunOutput::Failure& failure, ResultRow& row) {
  row.result = status_name(status_of_run_py_failure(failure));
  row.error_type = failure.type.empty() ? "exception" : failure.type;
  row.error_message = failure.stage + ": " + failure.message;
}

void run_py(const std::string& python, const std::string& script, const std::string& model_dir,
            ResultRow& row, const std::function<void(const std::string& out)>& parse) {
  TemporaryDirectory scratch("canrun-torch-");
  const std::string script_path = (scratch.path() / "run.py").string();
  {
    std::ofstream file(script_path);
    file << script;
    if (!file) fail(ErrorKind::kIo, script_path + ": cannot write run.py");
  }
  // No limit of its own: the sweep limits the check, and run.py dies with it.
  const ChildOutcome outcome = run_to_end({python, script_path, model_dir}, std::numeric_limits<double>::infinity());
  row.peak_host_memory_bytes = outcome.peak_rss_bytes;
  if (outcome.exit_code != 0)
    fail(ErrorKind::kRuntime, "run.py " + (outcome.signal ? "was killed by " + signal_name(outcome.signal)
                                                          : "exited with code " + std::to_string(outcome.exit_code)) +
                                  ": " + tail(outcome.err, 2000));
  try {
    parse(outcome.out);
  } catch (const Error& error) {
    fail(ErrorKind::kRuntime, std::string(error.what()) + "; its stderr ends: " + tail(outcome.err, 1000));
  }
}

void run_torch_check(const ModelSource& source, const CheckOptions& options, int cores, ResultRow& row) {
  TorchRunOutput run;
  run_py(options.torch.python, torch_run_script({source.dir, options.torch, cores, row.task}), source.dir, row,
                [&run](const std::string& out) { run = parse_torch_output(out); });
  row.load_time_s = run.load_time_s;
  row.compile_time_s = run.compile_time_s;
  row.recompilations = run.recompilations;
  row.graph_breaks = run.graph_breaks;
  row.eager_fallback = run.eager_fallback;
  row.peak_device_memory_bytes = run.peak_device_memory_bytes;
  if (run.failure) return record_run_py_failure(*run.failure, row);
  row.sentences_per_s = run.sentences_per_s;
  if (run.embeddings) {
    // The same rule as canrun's own check: cosine against the float32 reference.
    const auto flat = [](const std::vector<std::vector<double>>& rows) {
      std::vector<float> values;
      for (const auto& r : rows) values.insert(values.end(), r.begin(), r.end());
      return values;
    };
    const int64_t dimension = run.embeddings->empty() ? 0 : static_cast<int64_t>(run.embeddings->front().size());
    record_embedding_verdict(min_cosine(flat(*run.embeddings), flat(*run.reference_embeddings), dimension),
                             torch_dtype(options.torch) == "float32" ? kMinCosineF32 : kMinCosineBf16, row);
    return;
  }
  if (run.scores) {
    record_ranking_verdict(*run.scores, *run.reference_scores, row);
    return;
  }
  record_verdict(run.tested, run.reference, row);
  row.generated_text = run.text;
  // Sharded, or in bfloat16 against a float32 reference: tokens may part without anything wrong.
  if (cores > 1 || torch_dtype(options.torch) != "float32") judge_mismatch(row);
}

}  // namespace canrun
