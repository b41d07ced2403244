#include "lab/torch_check.h"

#include <fstream>
#include <limits>

#include "lab/child_process.h"
#include "lab/encoder_check.h"
#include "lab/status.h"
#include "lab/torch_runner.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

// The status of a run.py stage that failed: out of memory wherever it happens; otherwise the
// stage names it (a device torch lacks is a runtime failure, as the device is used at run time).
Status status_of_failure(const TorchRunOutput::Failure& failure) {
  if (failure.type == "OutOfMemoryError" || failure.type == "MemoryError") return Status::kOom;
  if (failure.stage == "load") return Status::kFailLoad;
  if (failure.stage == "compile") return Status::kFailCompile;
  return Status::kFailRuntime;
}

std::string tail(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

}  // namespace

void run_torch_check(const ModelSource& source, const CheckOptions& options, int cores, ResultRow& row) {
  TemporaryDirectory scratch("canrun-torch-");
  const std::string script_path = (scratch.path() / "run.py").string();
  {
    std::ofstream script(script_path);
    script << torch_run_script({source.dir, options.torch, cores, row.task});
    if (!script) fail(ErrorKind::kIo, script_path + ": cannot write run.py");
  }
  // No limit of its own: the sweep limits the check, and run.py dies with it.
  const ChildOutcome outcome =
      run_to_end({options.torch.python, script_path, source.dir}, std::numeric_limits<double>::infinity());
  row.peak_host_memory_bytes = outcome.peak_rss_bytes;
  if (outcome.exit_code != 0)
    fail(ErrorKind::kRuntime, "run.py " + (outcome.signal ? "was killed by " + signal_name(outcome.signal)
                                                          : "exited with code " + std::to_string(outcome.exit_code)) +
                                  ": " + tail(outcome.err, 2000));
  TorchRunOutput run;
  try {
    run = parse_torch_output(outcome.out);
  } catch (const Error& error) {
    fail(ErrorKind::kRuntime, std::string(error.what()) + "; its stderr ends: " + tail(outcome.err, 1000));
  }
  row.load_time_s = run.load_time_s;
  row.compile_time_s = run.compile_time_s;
  row.recompilations = run.recompilations;
  row.graph_breaks = run.graph_breaks;
  row.eager_fallback = run.eager_fallback;
  row.peak_device_memory_bytes = run.peak_device_memory_bytes;
  if (run.failure) {
    row.result = status_name(status_of_failure(*run.failure));
    row.error_type = run.failure->type.empty() ? "exception" : run.failure->type;
    row.error_message = run.failure->stage + ": " + run.failure->message;
    return;
  }
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
