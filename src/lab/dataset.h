// The lab's dataset: result rows stored as Parquet (Apache Arrow's C++ library), one file per
// (compiler version, library version) pair, readable with pandas, pyarrow or DuckDB.
//
// File name: "<compiler>__<library>.parquet", e.g. canrun-0.1.0__cpu-x86_64-avx2-fma.parquet for the
// built-in engine (canrun version; tested backend and the ISA its kernels ran with) or torch-2.5.1__transformers-4.46.0.parquet for an
// external runner. Each part is made of [A-Za-z0-9._+-] and holds no "__", so the name splits
// back into its pair unambiguously, and every row also carries the pair in its own columns.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace canrun {

struct StackComponent {
  std::string component;  // e.g. "canrun", "g++", "glibc", "kernel", "cpu"
  std::string version;
  bool operator==(const StackComponent&) const = default;
};

using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

// The layout the writer produces: 2 added schema_version and the columns after it, 3
// warm_compile_time_s, 4 the encoder checks' min_cosine, max_score_difference and sentences_per_s,
// 5 quantization, 6 workload and the training check's columns.
inline constexpr int32_t kDatasetSchemaVersion = 6;

// The codes of reason_code, each with its meaning, for the dataset card.
struct ReasonCode {
  const char* code;
  const char* meaning;
};
const std::vector<ReasonCode>& reason_codes();

// One check of one model. Optional fields are null in the file when the check never got there
// (no compile time for a model that failed to load) — never a made-up zero.
struct ResultRow {
  std::string model_id;
  std::optional<std::string> revision;  // Hub commit; null for a local folder without one
  std::string task;
  std::string architecture;  // model_type
  std::optional<int64_t> parameter_count;
  std::optional<std::string> weights;  // "real" or "synthetic"; null when nothing ran (e.g. UNSUPPORTED_ARCHITECTURE)
  std::string result;   // the status
  std::optional<std::string> error_type;
  std::optional<std::string> error_message;
  std::optional<int32_t> cores;
  std::optional<int32_t> tp_degree;
  std::optional<int32_t> ep_degree;
  std::optional<double> wall_time_s;  // the whole check, compilation included; null when nothing ran
  std::optional<double> compile_time_s;
  std::optional<int32_t> recompilations;            // prompt buckets compiled after the first; torch: recompiles
  std::optional<int32_t> graph_breaks;              // torch.compile's graph breaks; null when nothing compiled
  std::optional<bool> eager_fallback;               // torch.compile compiled no graph: everything ran eagerly
  std::optional<bool> plan_cache_hit;               // every plan entry came from the plan cache
  std::optional<int64_t> peak_activation_bytes;     // the compiled plan's largest activation arena
  std::optional<double> load_time_s;
  std::optional<int64_t> peak_device_memory_bytes;
  std::optional<int64_t> peak_host_memory_bytes;
  std::string prompt;
  std::optional<std::string> generated_text;
  std::optional<std::vector<int32_t>> generated_token_ids;
  std::optional<std::vector<int32_t>> reference_token_ids;
  std::optional<int32_t> matching_prefix_length;
  // How strong the verdict is: "exact" (tokens compared), "top-5" (the top-5 rule decided),
  // "judge" (the judge model decided); null when no generation was compared.
  std::optional<std::string> verification;
  std::optional<double> judge_score;  // the judge's mean log-prob per token, when it decided
  std::optional<std::string> judge;   // the judge model, its canrun version and threshold, when it decided
  std::vector<StackComponent> software_stack;
  std::string reproduce_script;
  Timestamp timestamp{};  // UTC
  std::string host;
  std::string compiler_version;  // with library_version: the pair that names the file
  std::string library_version;
  // The layout of the row (kDatasetSchemaVersion when written; 1 for files from before the column).
  int32_t schema_version = kDatasetSchemaVersion;
  // Why nothing ran, as a code beside error_message's sentence: one of reason_codes(); null
  // when the check ran.
  std::optional<std::string> reason_code;
  std::optional<std::string> license;  // the weights' licence as the catalog records it
  // The memory of the cores the run was planned on (the profile's per-core memory times cores;
  // for a model nothing holds, at the profile's largest core count), and the planner's estimate
  // per core of the larger of the tested and the reference run.
  std::optional<int64_t> memory_capacity_bytes;
  std::optional<int64_t> planned_memory_bytes;
  std::optional<bool> tokens_match;    // every tested token equals the reference's; null when none were compared
  std::optional<bool> judged_fluent;   // the judge's verdict on the text; null when no judge ran
  std::optional<int32_t> first_divergence_step;  // first generated position that differs; null when equal
  std::optional<std::string> plan_source;  // "built", "local_cache" or "remote_cache"; null before compiling
  std::optional<std::string> run_command;        // the `canrun check` line that repeats the row from a clone
  std::optional<double> warm_compile_time_s;     // a second session taking the same plan from the cache
  // An embedding check's (sentence-similarity, feature-extraction): the smallest cosine similarity
  // between the tested run's and the reference's embedding of a check sentence.
  std::optional<double> min_cosine;
  // A text-ranking check's: the largest |tested - reference| over the documents' scores.
  std::optional<double> max_score_difference;
  // An encoder check's throughput: texts (sentences, or query-document pairs) the tested run
  // encoded per second, timed after a first pass that compiled.
  std::optional<double> sentences_per_s;
  // How the checkpoint stores its weights when quantized ("compressed-tensors int4 (W4A16), group
  // 128", "gptq int8 (W8A16), per channel", "fp8 e4m3, blocks 128x128", "mxfp4 experts"); null
  // for weights stored as floats, or when the check stopped before reading the config.
  std::optional<std::string> quantization;
  // What the check ran: "inference" (generation, or an encoder's forward pass) or "train" (the
  // training check: fine-tuning steps on the torch runner, training_check.h).
  std::string workload = "inference";
  // A training check's, null on other rows: its steps; per step the tested run's loss and
  // gradient norm (before clipping) and the reference's (torch cpu float32 eager).
  std::optional<int32_t> train_steps;
  std::optional<std::vector<double>> train_losses;
  std::optional<std::vector<double>> reference_losses;
  std::optional<std::vector<double>> grad_norms;
  std::optional<std::vector<double>> reference_grad_norms;
  std::optional<std::vector<double>> step_times_s;  // the tested run's seconds per step
  // How far a loss after step 0 may lie from the reference's, relative to it; the first step
  // whose loss lies outside its tolerance (null when none does).
  std::optional<double> loss_tolerance;
  std::optional<int32_t> first_step_outside;
  // Step 0's loss as canrun's own engine computes it (ref backend, f32) from the same batch.
  std::optional<double> native_step0_loss;
  // The restart check: the step whose checkpoint a fresh process resumed from, and how its
  // losses compare with the continuous run's: "bit-identical", "within tolerance (...)" or "differs".
  std::optional<int32_t> restart_step;
  std::optional<std::string> restart_check;
  // The first step (compiling, warming up) apart from the steady steps' median and 95th
  // percentile; the steady steps' tokens per second.
  std::optional<double> first_step_time_s;
  std::optional<double> step_time_p50_s;
  std::optional<double> step_time_p95_s;
  std::optional<double> train_tokens_per_s;
  bool operator==(const ResultRow&) const = default;
};

struct VersionPair {
  std::string compiler;
  std::string library;
};

// What sets a row's workload apart within its version pair: "inference", or "train" with the
// fine-tuning setup and the dtype its software_stack names. A pair holds one row per model and
// workload setup: the newest.
std::string workload_setup(const ResultRow& row);

// The column names in file order.
const std::vector<std::string>& dataset_columns();

// "<compiler>__<library>.parquet"; throws a usage error for a part that cannot be a name.
std::string dataset_file_name(const VersionPair& pair);

// Writes all rows to `path` atomically: a reader sees the old file or the new one, never a
// part. Every row must carry the pair that `path`'s file name spells, or for a sweep shard's part
// (<pair>/part-K-of-N.parquet) its folder's name.
void write_dataset(const std::string& path, const std::vector<ResultRow>& rows);

// What write_dataset would write to `path`, as bytes.
std::string dataset_bytes(const std::string& path, const std::vector<ResultRow>& rows);

// Reads a file written by write_dataset (or any Parquet file with these columns and types;
// extra columns are ignored). Errors name the file, column and row.
std::vector<ResultRow> read_dataset(const std::string& path);

// One row as JSON, timestamps as ISO 8601 UTC ("2026-11-30T12:00:00.000000Z"), nulls as null.
Json row_to_json(const ResultRow& row);

// The inverse of row_to_json; errors name the field.
ResultRow row_from_json(const Json& json);

}  // namespace canrun
