// Result rows survive a Parquet round trip exactly; writes are atomic; bad rows and bad files
// are refused with the file, row or column named. tests/e2e/test_dataset_parquet.py reads the
// file WritesSampleForPythonReaders leaves with pandas, pyarrow and DuckDB.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lab/dataset.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const VersionPair kPair{"canrun-0.1.0", "cpu-x86_64-avx2-fma"};

std::vector<ResultRow> sample_rows() {
  ResultRow pass;
  pass.model_id = "HuggingFaceTB/SmolLM2-135M-Instruct";
  pass.revision = "12fd25f77366fa6b3b4b768ec3050bf629380bac";
  pass.task = "text-generation";
  pass.architecture = "llama";
  pass.parameter_count = 134'515'008;
  pass.weights = "real";
  pass.result = "PASS";
  pass.cores = 1;
  pass.tp_degree = 1;
  pass.ep_degree = 1;
  pass.wall_time_s = 12.625;
  pass.compile_time_s = 0.5;
  pass.recompilations = 0;
  pass.plan_cache_hit = true;
  pass.peak_activation_bytes = 3'145'728;
  pass.load_time_s = 1.25;
  pass.peak_device_memory_bytes = 1'234'567'890'123;
  pass.peak_host_memory_bytes = 987'654'321;
  pass.prompt = "The three primary colors are";
  pass.generated_text = " red, yellow and blue.\nThey \"mix\" — into 🎨 every other colour.";
  pass.generated_token_ids = std::vector<int32_t>{2114, 28, 5541, 284, 3789, 30, 0, 2147483647};
  pass.reference_token_ids = pass.generated_token_ids;
  pass.matching_prefix_length = 8;
  pass.software_stack = {{"canrun", "0.1.0"}, {"g++", "12.2.0"}, {"glibc", "2.36"}, {"cpu", "AMD EPYC, avx2"}};
  pass.reproduce_script = "#!/usr/bin/env bash\nset -euo pipefail\nbuild/canrun check HuggingFaceTB/SmolLM2-135M-Instruct\n";
  pass.timestamp = Timestamp(std::chrono::microseconds(1'795'996'800'123'456));  // 2026-11-30T00:00:00.123456Z
  pass.host = "lab-1";
  pass.compiler_version = kPair.compiler;
  pass.library_version = kPair.library;
  pass.license = "apache-2.0";
  pass.memory_capacity_bytes = 25'276'194'816;
  pass.planned_memory_bytes = 1'006'632'960;
  pass.tokens_match = true;
  pass.plan_source = "local_cache";
  pass.run_command = "build/canrun check HuggingFaceTB/SmolLM2-135M-Instruct --profile local";

  // A model that never loaded: everything after the load stays null, not zero.
  ResultRow failed;
  failed.model_id = "Qwen/Qwen3-8B";
  failed.task = "text-generation";
  failed.architecture = "qwen3";
  failed.weights = "synthetic";
  failed.result = "FAIL_LOAD";
  failed.error_type = "kCheckpoint";
  failed.error_message = "model.safetensors: header length 0 is too small";
  failed.wall_time_s = 0.0;
  failed.prompt = "";
  failed.software_stack = {};
  failed.reproduce_script = "";
  failed.timestamp = Timestamp(std::chrono::microseconds(-1));  // just before the epoch
  failed.host = "";
  failed.compiler_version = kPair.compiler;
  failed.library_version = kPair.library;

  ResultRow empty_lists = pass;
  empty_lists.model_id = "test/empty-generation";
  empty_lists.generated_text = "";
  empty_lists.generated_token_ids = std::vector<int32_t>{};
  empty_lists.reference_token_ids = std::vector<int32_t>{-1};
  empty_lists.matching_prefix_length = 0;
  empty_lists.tokens_match = false;
  empty_lists.first_divergence_step = 0;
  empty_lists.judged_fluent = false;

  // Nothing ran: a reason code and the numbers that say why, nothing measured.
  ResultRow not_tested = failed;
  not_tested.model_id = "Qwen/Qwen2.5-72B-Instruct";
  not_tested.weights.reset();
  not_tested.wall_time_s.reset();
  not_tested.result = "NOT_TESTED";
  not_tested.reason_code = "needs_memory";
  not_tested.memory_capacity_bytes = 25'276'194'816;
  not_tested.planned_memory_bytes = 145'412'407'296;
  // A training check: its per-step lists and the restart check.
  ResultRow trained = pass;
  trained.model_id = "test/trained";
  trained.workload = "train";
  trained.generated_text.reset();
  trained.generated_token_ids.reset();
  trained.reference_token_ids.reset();
  trained.train_steps = 3;
  trained.train_losses = std::vector<double>{2.5, 2.25, 1.875};
  trained.reference_losses = std::vector<double>{2.5, 2.25, 1.8750001};
  trained.grad_norms = std::vector<double>{12.5, 3.0, 0.125};
  trained.reference_grad_norms = std::vector<double>{};
  trained.step_times_s = std::vector<double>{3.5, 0.25, 0.375};
  trained.loss_tolerance = 1e-3;
  trained.first_step_outside = 2;
  trained.native_step0_loss = 2.5000001;
  trained.restart_step = 1;
  trained.restart_check = "bit-identical";
  trained.first_step_time_s = 3.5;
  trained.step_time_p50_s = 0.25;
  trained.step_time_p95_s = 0.375;
  trained.train_tokens_per_s = 512.0;
  return {pass, failed, empty_lists, not_tested, trained};
}

class LabDataset : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("canrun_lab_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / dataset_file_name(kPair)).string(); }
  fs::path dir_;
};

template <typename Action>
void expect_error(Action action, ErrorKind kind, const std::vector<std::string>& fragments) {
  try {
    action();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(LabDataset, FileNameSpellsTheVersionPair) {
  EXPECT_EQ(dataset_file_name(kPair), "canrun-0.1.0__cpu-x86_64-avx2-fma.parquet");
  EXPECT_EQ(dataset_file_name({"torch-2.5.1+cpu", "transformers-4.46.0"}),
            "torch-2.5.1+cpu__transformers-4.46.0.parquet");
  expect_error([] { dataset_file_name({"canrun__0.1", "ref"}); }, ErrorKind::kUsage, {"canrun__0.1"});
  expect_error([] { dataset_file_name({"canrun", "ref avx2"}); }, ErrorKind::kUsage, {"'ref avx2'"});
  expect_error([] { dataset_file_name({"", "ref"}); }, ErrorKind::kUsage, {"compiler version"});
  expect_error([] { dataset_file_name({"canrun", "../x"}); }, ErrorKind::kUsage, {"library version"});
}

TEST_F(LabDataset, RoundTripKeepsEveryValue) {
  const std::vector<ResultRow> rows = sample_rows();
  write_dataset(path(), rows);
  const std::vector<ResultRow> back = read_dataset(path());
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_TRUE(back[i] == rows[i]) << "row " << i;
  EXPECT_EQ(row_to_json(back[0])["timestamp"], "2026-11-30T00:00:00.123456Z");
  EXPECT_EQ(row_to_json(back[1])["timestamp"], "1969-12-31T23:59:59.999999Z");
  EXPECT_TRUE(row_to_json(back[1])["cores"].is_null());
}

TEST_F(LabDataset, EmptyDatasetRoundTrips) {
  write_dataset(path(), {});
  EXPECT_TRUE(read_dataset(path()).empty());
}

TEST_F(LabDataset, WritesReplaceTheFileAndLeaveNoTemporary) {
  std::vector<ResultRow> rows = sample_rows();
  write_dataset(path(), rows);
  rows.pop_back();
  write_dataset(path(), rows);
  EXPECT_EQ(read_dataset(path()).size(), sample_rows().size() - 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(LabDataset, RefusedWriteKeepsTheOldFile) {
  write_dataset(path(), sample_rows());
  std::vector<ResultRow> rows = sample_rows();
  rows[1].weights = "random";
  expect_error([&] { write_dataset(path(), rows); }, ErrorKind::kUsage, {"row 1 (Qwen/Qwen3-8B)", "weights"});
  rows = sample_rows();
  rows[2].library_version = "cpu-avx512";
  expect_error([&] { write_dataset(path(), rows); }, ErrorKind::kUsage,
               {"row 2", "canrun-0.1.0__cpu-avx512.parquet", "not canrun-0.1.0__cpu-x86_64-avx2-fma.parquet"});
  EXPECT_EQ(read_dataset(path()).size(), sample_rows().size());
  // A folder that does not exist: the temporary cannot be made, and the error names it.
  expect_error([&] { write_dataset((dir_ / "missing" / dataset_file_name(kPair)).string(), sample_rows()); },
               ErrorKind::kIo, {"missing", "cannot create"});
}

TEST_F(LabDataset, UnreadableFilesNameTheProblem) {
  expect_error([&] { read_dataset(path()); }, ErrorKind::kIo, {path()});
  std::ofstream(path()) << "not parquet";
  expect_error([&] { read_dataset(path()); }, ErrorKind::kIo, {path()});
  // A Parquet file without the lab's columns.
  auto ids = arrow::Int64Builder();
  ASSERT_TRUE(ids.Append(1).ok());
  const auto table = arrow::Table::Make(arrow::schema({arrow::field("model_id", arrow::int64())}),
                                        {ids.Finish().ValueOrDie()});
  auto out = arrow::io::FileOutputStream::Open(path()).ValueOrDie();
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out).ok());
  ASSERT_TRUE(out->Close().ok());
  expect_error([&] { read_dataset(path()); }, ErrorKind::kIo, {"column 'model_id': expected string, found int64"});
}

// Found by fuzz/dataset_rows_fuzz: a string cell that is not UTF-8 reached the JSON printer and
// threw there. A dataset file is now validated whole (UTF-8, offsets) when it is read.
TEST_F(LabDataset, StringsThatAreNotUtf8AreRefusedOnRead) {
  auto ids = arrow::StringBuilder();
  ASSERT_TRUE(ids.Append(std::string("org/m\x8c\xff")).ok());
  const auto table = arrow::Table::Make(arrow::schema({arrow::field("model_id", arrow::utf8())}),
                                        {ids.Finish().ValueOrDie()});
  auto out = arrow::io::FileOutputStream::Open(path()).ValueOrDie();
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out).ok());
  ASSERT_TRUE(out->Close().ok());
  expect_error([&] { read_dataset(path()); }, ErrorKind::kIo, {path(), "not a valid dataset file", "UTF8"});
}

// Leaves the sample rows as Parquet, and as JSON for comparison, in $CANRUN_DATASET_SAMPLE_DIR
// when set (the pytest sets it), else in this test's temporary folder.
TEST_F(LabDataset, WritesSampleForPythonReaders) {
  const char* requested = std::getenv("CANRUN_DATASET_SAMPLE_DIR");
  const fs::path dir = requested ? fs::path(requested) : dir_;
  const std::vector<ResultRow> rows = sample_rows();
  write_dataset((dir / dataset_file_name(kPair)).string(), rows);
  Json expected = Json::array();
  for (const ResultRow& row : rows) expected.push_back(row_to_json(row));
  std::ofstream(dir / "expected.json") << expected.dump(2);
  EXPECT_EQ(read_dataset((dir / dataset_file_name(kPair)).string()).size(), rows.size());
}

TEST(LabDatasetJson, RowsRoundTripThroughJson) {
  // The sweep reads each child's row from `canrun check --json`.
  for (const ResultRow& row : sample_rows()) EXPECT_EQ(row_from_json(row_to_json(row)), row);
  Json missing = row_to_json(sample_rows().front());
  missing.erase("cores");
  EXPECT_THROW(row_from_json(missing), Error);
  Json wrong = row_to_json(sample_rows().front());
  wrong["timestamp"] = "yesterday";
  try {
    row_from_json(wrong);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timestamp 'yesterday'"), std::string::npos) << e.what();
  }
}

// A file written before schema_version existed reads as layout 1; rows written now carry the
// current layout.
TEST_F(LabDataset, FilesWithoutTheSchemaVersionAreLayoutOne) {
  EXPECT_EQ(sample_rows().front().schema_version, kDatasetSchemaVersion);
  Json old = row_to_json(sample_rows().front());
  old.erase("schema_version");
  EXPECT_EQ(row_from_json(old).schema_version, 1);
}

// A file from before the workload column holds generation checks.
TEST_F(LabDataset, FilesWithoutTheWorkloadHoldInference) {
  Json old = row_to_json(sample_rows().back());
  ASSERT_EQ(old["workload"], "train");
  old.erase("workload");
  EXPECT_EQ(row_from_json(old).workload, "inference");
}

TEST(LabDatasetColumns, ListTheIssuesColumns) {
  const std::vector<std::string>& names = dataset_columns();
  for (const char* name : {"model_id", "revision", "task", "architecture", "parameter_count", "weights", "result",
                           "error_type", "error_message", "cores", "tp_degree", "ep_degree", "wall_time_s",
                           "compile_time_s", "recompilations", "plan_cache_hit", "peak_activation_bytes", "load_time_s", "peak_device_memory_bytes", "peak_host_memory_bytes",
                           "prompt", "generated_text", "generated_token_ids", "reference_token_ids",
                           "matching_prefix_length", "software_stack", "reproduce_script", "timestamp", "host",
                           "schema_version", "reason_code", "license", "memory_capacity_bytes",
                           "planned_memory_bytes", "tokens_match", "judged_fluent", "first_divergence_step",
                           "plan_source", "run_command", "quantization", "workload", "train_steps",
                           "train_losses", "reference_losses", "grad_norms", "reference_grad_norms", "step_times_s",
                           "loss_tolerance", "first_step_outside", "native_step0_loss", "restart_step",
                           "restart_check", "first_step_time_s", "step_time_p50_s", "step_time_p95_s",
                           "train_tokens_per_s"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

}  // namespace
}  // namespace canrun
