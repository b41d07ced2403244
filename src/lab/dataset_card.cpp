#include "lab/dataset_card.h"

#include <cstdio>
#include <map>
#include <set>

#include "lab/check.h"
#include "lab/dataset.h"
#include "lab/status.h"
#include "lab/device_profile.h"
#include "util/error.h"

namespace canrun {
namespace {

std::string plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

const std::map<std::string, std::string>& descriptions() {
  static const std::map<std::string, std::string> kDescriptions = {
      {"model_id", "Hub id (org/name), or the folder as given for a local checkpoint."},
      {"revision", "Hub commit of the Hugging Face cache snapshot; null for local folders and synthetic weights."},
      {"task", "Pipeline task from the catalog (text-generation, image-text-to-text)."},
      {"architecture", "config.json's model_type."},
      {"parameter_count", "Parameters: exact from the architecture when supported, else as published."},
      {"weights", "`real` (published weights) or `synthetic` (random bf16 from the real config, fixed seed); null "
                  "when nothing ran (an unsupported family, an excluded model, weights that could not be had)."},
      {"result", "The status; see the table above."},
      {"error_type", "Kind of failure (e.g. checkpoint, runtime, mismatch, signal, timeout); null on PASS."},
      {"error_message", "The error, the mismatch position, or the reason a model was not tested or excluded."},
      {"cores", "Cores the planner chose on the profile; null when nothing fits or nothing was planned."},
      {"tp_degree", "Tensor-parallel degree."},
      {"ep_degree", "Expert-parallel degree (1 for dense models)."},
      {"wall_time_s", "Seconds for the whole check: resolving, planning, making synthetic weights, loading, "
                      "compiling, both generations and verification; null when nothing ran."},
      {"compile_time_s", "Seconds the tested run spent compiling its plan or loading it from the plan cache; null "
                         "when the check stopped before compiling."},
      {"recompilations", "Prompt-length buckets compiled after the first one (0 for the one fixed prompt); on the "
                         "torch runner, torch._dynamo's recompiles."},
      {"graph_breaks", "Torch runner: torch.compile's graph breaks (an operator or construct the backend could not "
                       "capture runs eagerly there); null for eager runs and canrun."},
      {"eager_fallback", "Torch runner: true when torch.compile captured no graph at all, so the whole run was "
                         "eager although a backend was asked for; null for eager runs and canrun."},
      {"plan_cache_hit", "True when every plan entry came from the plan cache, false when any was compiled; null when the "
                         "check compiled without the plan cache (a sweep's synthetic weights that it removes afterwards)."},
      {"peak_activation_bytes", "The compiled plan's largest activation arena (its buffer plan), in bytes."},
      {"load_time_s", "Seconds reading config, weights and tokenizer into the tested run's model."},
      {"peak_device_memory_bytes", "Peak accelerator memory (torch.cuda.max_memory_allocated, the Neuron "
                                   "runtime's figure); null on CPUs, whose peak is peak_host_memory_bytes."},
      {"peak_host_memory_bytes", "Peak resident memory of the check's process (VmHWM): the larger of the tested "
                                 "and the reference run, which run one after the other."},
      {"prompt", "The fixed prompt, or for synthetic weights the token ids derived from it."},
      {"generated_text", "The generated tokens decoded; null without a tokenizer (synthetic weights)."},
      {"generated_token_ids", "The generated token ids (greedy, at most 32, ending at an eos id if one came)."},
      {"reference_token_ids", "The token ids of the reference run on the same checkpoint: the `ref` backend (f32, "
                              "uncompiled), or for the torch runner torch's cpu eager in float32."},
      {"matching_prefix_length", "How many leading tokens agree with the reference."},
      {"verification", "How strong the verdict is: `exact` (the tokens equal the reference's), `top-5` (they "
                       "differ and the top-5 rule decided) or `judge` (the judge model decided: PASS_JUDGE, "
                       "FAIL_JUDGE); null when no generation was compared."},
      {"judge_score", "When the judge decided: the mean log-probability per token the judge model gives the "
                      "generated text after the prompt."},
      {"judge", "When the judge decided: the judge model, the canrun that ran it and the threshold."},
      {"software_stack", "Each component of the stack and its version (canrun, backend, ISA, compiler, Arrow, "
                         "glibc, OS, kernel, CPU)."},
      {"reproduce_script", "A bash script that reproduces the row (`canrun repro MODEL`): from a fresh clone of "
                           "canrun, or for the torch runner from a fresh venv with the row's run.py."},
      {"timestamp", "When the check finished (UTC)."},
      {"host", "The machine's host name."},
      {"compiler_version", "First half of the version pair that names the file (for canrun: canrun-<version>; for "
                           "the torch runner: torch-<version>+<compile backend or eager>-<device>)."},
      {"schema_version", "The row's layout: " + std::to_string(kDatasetSchemaVersion) +
                             " for rows written now (5: before workload and the training columns; 4: before quantization; 3: before min_cosine, max_score_difference and sentences_per_s; 2: before "
                             "warm_compile_time_s; 1: files from before this column)."},
      {"reason_code", "Why nothing ran, as a code (see Reason codes above); null when the check ran."},
      {"license", "The weights' licence as the catalog records it from the Hub (check the weights' rights apart "
                  "from canrun's); null when unknown."},
      {"memory_capacity_bytes", "The memory of the cores the run was planned on (the profile's memory per core times "
                                "cores; for a model nothing holds, at the largest core count tried), next to "
                                "peak_host_memory_bytes."},
      {"planned_memory_bytes", "The planner's estimate per core of the larger of the tested and the reference run: "
                               "weights as the checkpoint stores them, KV cache and activations in f32, and the "
                               "process's own memory."},
      {"tokens_match", "True when every generated token equals the reference's, false when they part; null when "
                       "nothing was compared."},
      {"judged_fluent", "The judge model's verdict on the generated text (judge_score at or above its threshold); "
                        "null when no judge ran."},
      {"first_divergence_step", "The first generated position (0-based) where the tested run and the reference "
                                "differ; null when they are equal or nothing was compared."},
      {"plan_source", "Where the tested run's plan came from: `built` (compiled in this check; compile_time_s is "
                      "a cold compile), `local_cache` (loaded from the plan cache; compile_time_s is a warm load) "
                      "or `remote_cache` (loaded from entries `canrun cache pull` brought from a shared cache); "
                      "null when the check stopped before compiling."},
      {"warm_compile_time_s", "Seconds a second session of the tested run, opened after the first is gone, took to "
                              "load the same plan from the plan cache (a warm start; with --no-plan-cache, from a "
                              "cache folder of the check's own); null when the check stopped before, or on the "
                              "torch runner."},
      {"min_cosine", "An embedding check (sentence-similarity, feature-extraction): the smallest cosine similarity "
                     "between the tested run's and the reference's embedding of the same check sentence; null for "
                     "other tasks."},
      {"max_score_difference", "A text-ranking check: the largest difference between the tested run's and the "
                               "reference's score of a document; null for other tasks."},
      {"sentences_per_s", "An encoder check: the texts (sentences, or query-document pairs for text-ranking) the "
                          "tested run encoded per second, timed on a second pass after the first compiled; null for "
                          "other tasks. One small batch on the check's cores: a sanity figure, not a benchmark."},
      {"quantization", "How the checkpoint stores its weights when it is quantized, as its config.json's "
                       "quantization_config says: `compressed-tensors int4 (W4A16), group 128`, `gptq int8 (W8A16), "
                       "per channel`, `fp8 e4m3, blocks 128x128` or `mxfp4 experts`; null for "
                       "weights stored as floats or when the check stopped before reading the config."},
      {"workload", "What the check ran: `inference` (the generation check, or an encoder's forward pass) or `train` "
                   "(the training check, `--runner torch --workload train`: fine-tuning steps on the committed "
                   "instruction examples, verified against torch's cpu in float32, eager). A pair holds one row per "
                   "model and workload setup (the training setup and dtype in software_stack)."},
      {"train_steps", "A training check: its optimizer steps; null on other rows."},
      {"train_losses", "A training check: the tested stack's loss at each step (the mean cross-entropy of the "
                       "responses' tokens)."},
      {"reference_losses", "A training check: the reference's loss at each step (the same steps on torch's cpu in "
                           "float32, eager)."},
      {"grad_norms", "A training check: the tested stack's gradient norm at each step, before clipping to 1."},
      {"reference_grad_norms", "A training check: the reference's gradient norm at each step."},
      {"step_times_s", "A training check: the tested stack's seconds for each step (forward, backward and "
                       "optimizer step, the device synchronised)."},
      {"loss_tolerance", "A training check: how far a loss after step 0 may lie from the reference's, relative to "
                         "the larger of the reference's loss at that step and at step 0 (1e-3 for float32, 5e-2 "
                         "for bfloat16); step 0's loss and gradient norm get 1e-4 and 1e-2, relative."},
      {"first_step_outside", "A training check: the first step whose loss lies outside its tolerance; null when "
                             "none does."},
      {"native_step0_loss", "A training check: step 0's loss as canrun's own engine computes it (ref backend, f32) "
                            "from the same batch, an independent check of the reference's."},
      {"restart_step", "A training check: the step after which a checkpoint (model, optimizer, scheduler, random "
                       "number generators) was saved and a fresh process resumed from it."},
      {"restart_check", "A training check: how the resumed process's losses compare with the continuous run's: "
                        "`bit-identical`, `within tolerance (the device is not deterministic)` (not on cpu) or "
                        "`differs`."},
      {"first_step_time_s", "A training check: the first step's seconds (torch.compile compiles in it)."},
      {"step_time_p50_s", "A training check: the median of the steps after the first, in seconds."},
      {"step_time_p95_s", "A training check: the 95th percentile of the steps after the first, in seconds."},
      {"train_tokens_per_s", "A training check: the tokens of the steps after the first (padding not counted) per "
                             "second."},
      {"run_command", "The `canrun check` command that repeats the row from a clone built with the README's set-up "
                      "command."},
      {"library_version", "Second half of the version pair (for canrun: <tested backend>-<ISA its kernels ran with>, "
                          "e.g. cpu-x86_64-avx2-fma; for the torch runner: transformers-<version>)."},
  };
  return kDescriptions;
}

}  // namespace

std::string run_summary(const std::vector<ResultRow>& rows) {
  std::set<std::string> hosts, cpus, capacities;
  size_t ran = 0;
  double seconds = 0;
  for (const ResultRow& row : rows) {
    hosts.insert(row.host);
    for (const StackComponent& part : row.software_stack)
      if (part.component == "cpu") cpus.insert(part.version);
    if (row.memory_capacity_bytes && row.cores) capacities.insert(format_bytes(*row.memory_capacity_bytes / *row.cores));
    if (!row.wall_time_s) continue;
    ++ran;
    seconds += *row.wall_time_s;
  }
  const auto join = [](const std::set<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : "; ") + item;
    return text.empty() ? std::string("not recorded") : text;
  };
  char hours[32];
  std::snprintf(hours, sizeof(hours), "%.2f h", seconds / 3600);
  return plural(rows.size(), "row") + " from " + plural(hosts.size(), "host") + " (" + join(hosts) + "); CPU: " +
         join(cpus) + "; memory per core of the profile: " + join(capacities) + ". " + plural(ran, "check") +
         " ran, taking " + hours + " together (the sum of wall_time_s).";
}

const std::string& column_description(const std::string& column) {
  const auto found = descriptions().find(column);
  if (found == descriptions().end()) fail(ErrorKind::kUsage, "dataset card: column '" + column + "' has no description");
  return found->second;
}

std::string dataset_card(const std::vector<CardConfig>& configs) {
  std::string card =
      "---\n"
      "license: cc-by-4.0\n"
      "pretty_name: canrun support lab results\n"
      "task_categories:\n"
      "- text-generation\n"
      "- image-text-to-text\n"
      "tags:\n"
      "- canrun\n"
      "- model-compatibility\n"
      "configs:\n";
  for (const CardConfig& config : configs) {
    card += "- config_name: " + config.name + "\n  data_files:\n";
    for (const std::string& files : config.data_files) card += "  - " + files + "\n";
  }
  card +=
      "---\n\n"
      "# canrun support lab results\n\n"
      "Whether popular Hugging Face models run on canrun, checked with one protocol and written by `canrun check` / "
      "`canrun sweep`. One Parquet file (one config above) per version pair: `<compiler version>__<library "
      "version>.parquet`; for canrun's own engine the canrun version and the tested backend with the ISA its kernels "
      "ran with (`cpu-x86_64-avx2-fma`, or `cpu-x86_64-portable` without AVX2 and FMA). Read them with "
      "pandas, pyarrow or DuckDB, or with `canrun query`.\n\n"
      "## The protocol\n\n"
      "For each model: resolve the weights (a local folder, the Hugging Face cache — downloaded into it when missing "
      "— or, when asked and in a sweep for models not in the cache, synthetic weights made from the catalog's real "
      "config with a fixed seed; the `weights` column says which); plan the fewest cores of the device "
      "profile that hold it; load it for the `cpu` backend (bf16 weights stay bf16) and compile it (or load its plan "
      "from the plan cache); generate " + std::to_string(kCheckNewTokens) +
      " tokens greedily from the fixed prompt \"" + kCheckPrompt +
      "\" (an image-text-to-text model: canrun's check image, 64x48 pixels made in code, and \"" +
      kCheckInstruction +
      "\" as a user turn through the chat template; synthetic weights, which have no tokenizer: the "
      "image's tokens, then the instruction's bytes modulo the vocabulary size); free it and open it once more, "
      "timing a warm start from the plan cache (`warm_compile_time_s`); free that, load the same "
      "checkpoint for the reference `ref` backend (f32 arithmetic, never compiled; it keeps the weights as stored "
      "and widens each row to f32 as it uses it, so it needs no more memory than the tested run), generate again "
      "and compare. An encoder (sentence-similarity, feature-extraction, text-ranking) instead encodes fixed texts "
      "on both backends: an embedding model 8 sentences, PASS when every tested embedding's cosine similarity with "
      "the reference's is at least 0.99999 (0.999 for bf16 weights; `min_cosine`); a cross-encoder one query "
      "against 4 documents, PASS when the documents rank in the same order and every score is within 1e-4 "
      "(`max_score_difference`). The planner sizes the larger of the two runs (`planned_memory_bytes`) against the profile's "
      "memory (`memory_capacity_bytes`); a model nothing holds is NOT_TESTED with nothing run, and its row says by "
      "how much it is too large and how many cores of that size would hold it. A sweep runs "
      "each check in its own process with "
      "a wall-time and a memory limit, so a crash, hang or out-of-memory becomes a row.\n\n"
      "## Where these rows were run\n\n";
  for (const CardConfig& config : configs) card += "- `" + config.name + "`: " + config.where_run + "\n";
  card +=
      "\n## Statuses\n\n| result | meaning |\n|---|---|\n";
  for (const StatusInfo& info : all_statuses())
    card += "| `" + std::string(info.name) + "` | " + std::string(info.meaning) + " |\n";
  card +=
      "\n## Reason codes\n\n| reason_code | meaning |\n|---|---|\n";
  for (const ReasonCode& reason : reason_codes())
    card += "| `" + std::string(reason.code) + "` | " + reason.meaning + " |\n";
  card +=
      "\n**What PASS means:** this checkpoint loaded, fit on the cores the planner chose, and its " + std::to_string(kCheckNewTokens) +
      " greedy tokens from one short prompt equal the reference run token for token. **What it does not mean:** "
      "nothing about throughput or latency (`wall_time_s` is the time of the whole check, not a benchmark), nothing "
      "about long generations, long prompts, sampling or batching, and — with synthetic weights — nothing about the "
      "quality of the text: synthetic rows answer \"does it load, fit and run\", only real weights answer \"is the "
      "text right\". The tested run is the compiled `cpu` backend and the reference the `ref` backend, so PASS also "
      "means the compiled kernels agree with the reference ones on this model.\n\n"
      "## Columns\n\n| column | meaning |\n|---|---|\n";
  for (const std::string& column : dataset_columns()) card += "| `" + column + "` | " + column_description(column) + " |\n";
  return card;
}

}  // namespace canrun
