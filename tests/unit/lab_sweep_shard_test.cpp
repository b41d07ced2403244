// Sharded sweeps: --shard K/N slices a selection into N disjoint parts that every machine
// computes alike, and merge_parts folds the shards' Parquet parts into each pair's file with one
// row per model, the newest check winning.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <map>
#include <set>

#include "lab/results_dir.h"
#include "lab/sweep_shard.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const VersionPair kPair{"canrun-0.1.0", "cpu-x86_64-avx512"};

TEST(SweepShard, EveryModelFallsInExactlyOneSliceOfN) {
  for (int64_t n : {1, 2, 3, 7}) {
    std::vector<int64_t> sizes(static_cast<size_t>(n));
    for (int i = 0; i < 700; ++i) {
      const std::string id = "org-" + std::to_string(i % 13) + "/model-" + std::to_string(i);
      int64_t holders = 0;
      for (int64_t k = 1; k <= n; ++k) {
        if (!SweepShard{k, n}.holds(id)) continue;
        ++holders;
        ++sizes[static_cast<size_t>(k - 1)];
      }
      ASSERT_EQ(holders, 1) << id << " in " << n << " slices";
    }
    for (int64_t size : sizes) EXPECT_GT(size, 700 / n / 2) << "slices of " << n << " are far from even";
  }
}

TEST(SweepShard, ASliceFollowsFromTheIdAlone) {
  // FNV-1a of the id, the same on every machine and build: FNV-1a("Qwen/Qwen3-0.6B") is
  // 0x50799176820428f2, 2 modulo 8, so the third of eight slices holds it.
  for (int64_t k = 1; k <= 8; ++k) EXPECT_EQ(SweepShard({k, 8}).holds("Qwen/Qwen3-0.6B"), k == 3) << k;
  const SweepShard shard = parse_sweep_shard("3/8");
  EXPECT_EQ(shard.index, 3);
  EXPECT_EQ(shard.count, 8);
  EXPECT_EQ(shard.part_name(), "part-3-of-8");
}

TEST(SweepShard, BadShardsAreNamed) {
  for (const char* text : {"", "3", "0/4", "5/4", "1/0", "a/4", "1/4x", "-1/4", "1/100001"}) {
    try {
      parse_sweep_shard(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find("--shard '" + std::string(text) + "': expected K/N"), std::string::npos)
          << e.what();
    }
  }
}

class MergeParts : public testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs them at once.
    dir_ = fs::temp_directory_path() /
           ("canrun_merge_parts_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static ResultRow row(const std::string& model, const std::string& result, int64_t seconds) {
    ResultRow r;
    r.model_id = model;
    r.task = "text-generation";
    r.architecture = "llama";
    r.weights = "synthetic";
    r.result = result;
    r.timestamp = Timestamp(std::chrono::seconds(1'796'000'000 + seconds));
    r.compiler_version = kPair.compiler;
    r.library_version = kPair.library;
    return r;
  }
  // Model -> result, each model once.
  static std::map<std::string, std::string> results(const std::vector<ResultRow>& rows) {
    std::map<std::string, std::string> by_model;
    for (const ResultRow& r : rows) EXPECT_TRUE(by_model.emplace(r.model_id, r.result).second) << r.model_id << " twice";
    return by_model;
  }
  static std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string dir() const { return dir_.string(); }
  fs::path dir_;
};

TEST_F(MergeParts, PartsFoldIntoThePairsFileNewestFirst) {
  record_row(dir(), row("a", "TIMEOUT", 0));  // merged earlier
  record_row(dir(), row("b", "PASS", 0));
  record_row(dir(), row("a", "PASS", 10), "part-1-of-2");  // a newer check of a
  record_row(dir(), row("c", "PASS", 5), "part-1-of-2");
  record_row(dir(), row("b", "FAIL_RUNTIME", -5), "part-2-of-2");  // older than the merged row
  record_row(dir(), row("d", "OOM", 5), "part-2-of-2");
  const fs::path parts = dir_ / "canrun-0.1.0__cpu-x86_64-avx512";
  ASSERT_TRUE(fs::exists(parts / "part-1-of-2.parquet"));
  EXPECT_EQ(read_dataset((dir_ / dataset_file_name(kPair)).string()).size(), 2u);  // parts are not the pair's file
  const std::vector<DatasetFile> listed = list_dataset_files(dir());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].parts, (std::vector<std::string>{(parts / "part-1-of-2.parquet").string(),
                                                       (parts / "part-2-of-2.parquet").string()}));
  const std::map<std::string, std::string> expected = {{"a", "PASS"}, {"b", "PASS"}, {"c", "PASS"}, {"d", "OOM"}};
  EXPECT_EQ(results(read_pair(listed[0])), expected);  // readers combine the parts before a merge
  EXPECT_NE(read_file(dir_ / "README.md").find("  - canrun-0.1.0__cpu-x86_64-avx512/*.parquet\n"), std::string::npos);

  const std::vector<MergedPair> merged = merge_parts(dir());
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].parts, 2);
  EXPECT_EQ(merged[0].models, 4);
  EXPECT_EQ(results(read_dataset((dir_ / dataset_file_name(kPair)).string())), expected);
  EXPECT_FALSE(fs::exists(parts));
  EXPECT_EQ(read_file(dir_ / "README.md").find("/*.parquet"), std::string::npos);
  EXPECT_TRUE(merge_parts(dir()).empty());  // nothing left to merge
}

TEST_F(MergeParts, APairWithOnlyPartsIsListed) {
  record_row(dir(), row("a", "PASS", 0), "part-3-of-4");
  const std::vector<DatasetFile> listed = list_dataset_files(dir());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].path, (dir_ / dataset_file_name(kPair)).string());
  EXPECT_FALSE(fs::exists(listed[0].path));
  EXPECT_EQ(results(read_pair(listed[0])), (std::map<std::string, std::string>{{"a", "PASS"}}));
}

TEST_F(MergeParts, AnUnreadablePartStopsItBeforeAnythingChanges) {
  record_row(dir(), row("a", "PASS", 0), "part-1-of-2");
  const fs::path parts = dir_ / "canrun-0.1.0__cpu-x86_64-avx512";
  std::ofstream(parts / "part-2-of-2.parquet") << "not parquet";
  try {
    merge_parts(dir());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part-2-of-2.parquet"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(parts / "part-1-of-2.parquet"));
  EXPECT_FALSE(fs::exists(dir_ / dataset_file_name(kPair)));
}

TEST_F(MergeParts, RemovingModelsTakesOnlyTheirRowsFromEveryPair) {
  record_row(dir(), row("a", "PASS", 0));
  record_row(dir(), row("b", "NOT_TESTED", 0));
  ResultRow other_pair = row("b", "PASS", 0);
  other_pair.library_version = "cpu-x86_64-avx2-fma";
  record_row(dir(), other_pair);
  const std::vector<RemovedRows> removed = remove_models(dir(), {"b", "absent"});
  ASSERT_EQ(removed.size(), 2u);
  for (const RemovedRows& pair : removed) EXPECT_EQ(pair.models, std::vector<std::string>{"b"});
  EXPECT_EQ(removed[0].rows_left + removed[1].rows_left, 1);
  EXPECT_EQ(results(read_dataset((dir_ / dataset_file_name(kPair)).string())),
            (std::map<std::string, std::string>{{"a", "PASS"}}));
  EXPECT_TRUE(remove_models(dir(), {"b"}).empty());  // nothing left to remove
}

TEST_F(MergeParts, RemovingWaitsForPartsToBeMerged) {
  record_row(dir(), row("a", "PASS", 0));
  record_row(dir(), row("a", "PASS", 5), "part-1-of-2");
  EXPECT_THROW(remove_models(dir(), {"a"}), Error);
  EXPECT_EQ(read_dataset((dir_ / dataset_file_name(kPair)).string()).size(), 1u);
}

// The shipped dataset and the user's results read together: one row per model, the newer check
// winning (on a tie the later folder's), and the models whose row came from the user's folder
// marked as theirs.
TEST_F(MergeParts, TwoFoldersReadAsOnePairWithTheUsersRowsMarked) {
  const std::string shipped = (dir_ / "shipped").string(), mine = (dir_ / "mine").string();
  record_row(shipped, row("a", "PASS", 0));
  record_row(shipped, row("b", "NOT_TESTED", 0));
  record_row(shipped, row("c", "PASS", 10));
  record_row(mine, row("b", "PASS", 5));         // the user's newer check
  record_row(mine, row("c", "FAIL_RUNTIME", 5));  // older than the shipped row
  record_row(mine, row("d", "OOM", 0));
  const std::vector<PairFiles> pairs = list_pairs({{shipped, false}, {mine, true}, {(dir_ / "none").string(), true}});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].files.size(), 2u);
  std::set<std::string> yours;
  EXPECT_EQ(results(read_pair(pairs[0], &yours)),
            (std::map<std::string, std::string>{{"a", "PASS"}, {"b", "PASS"}, {"c", "PASS"}, {"d", "OOM"}}));
  EXPECT_EQ(yours, (std::set<std::string>{"b", "d"}));
  // --data names one folder, marked as no one's; by default the user's folder follows the
  // shipped one unless they are the same folder.
  ASSERT_EQ(dataset_folders(mine).size(), 1u);
  EXPECT_FALSE(dataset_folders(mine)[0].yours);
  setenv("CANRUN_DATASET", shipped.c_str(), 1);
  setenv("CANRUN_RESULTS", mine.c_str(), 1);
  const std::vector<DatasetFolder> both = dataset_folders("");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].dir, shipped);
  EXPECT_TRUE(both[1].yours && both[1].dir == mine);
  setenv("CANRUN_RESULTS", shipped.c_str(), 1);
  EXPECT_EQ(dataset_folders("").size(), 1u);
  unsetenv("CANRUN_DATASET");
  unsetenv("CANRUN_RESULTS");
}

}  // namespace
}  // namespace canrun
