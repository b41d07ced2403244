// The plan cache: misses build, hits do not; every key field changes the digest; corrupt and
// foreign entries are warned about and rebuilt; processes racing on one key build once; a
// failed build stores nothing; prune removes other versions, leftovers and old entries.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "plan/plan_cache.h"
#include "plan/plan_manifest.h"
#include "util/json.h"
#include "plan_test_files.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

PlanKey test_key(const std::string& version = "1.0") {
  return {"graph", version, "x86_64-avx2-fma", "cpu", "c0ffee", "beef", "prefill=64;cache=2048", "tp1.rank0"};
}

// A plan of two files, one in a subfolder.
void build_plan(const fs::path& dir) {
  write_file(dir / "weights.bin", std::string(4096, '\x5a'));
  write_file(dir / "graph" / "plan.json", R"({"ops": ["matmul", "rms_norm"]})");
}

void age(const fs::path& path, int64_t seconds) {
  fs::last_write_time(path, fs::last_write_time(path) - std::chrono::seconds(seconds));
}

class PlanCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    // Parameterised tests are named "IsWarnedAndRebuilt/truncated": keep it one folder.
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    root_ = fs::temp_directory_path() / ("canrun_plan_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  PlanEntry build(PlanCache& cache, const PlanKey& key, bool* built = nullptr) {
    return cache.get_or_build(key, build_plan, built, {"tiny-llama"});
  }

  fs::path root_;
};

TEST_F(PlanCacheTest, MissBuildsAndHitDoesNot) {
  PlanCache cache(root_, "1.0");
  EXPECT_FALSE(cache.find(test_key()).has_value());
  bool built = false;
  const PlanEntry first = build(cache, test_key(), &built);
  EXPECT_TRUE(built);
  EXPECT_EQ(first.dir, root_ / "1.0" / test_key().digest());
  EXPECT_EQ(read_file(first.file("graph/plan.json")), R"({"ops": ["matmul", "rms_norm"]})");
  EXPECT_EQ(first.manifest["label"], "tiny-llama");
  EXPECT_EQ(first.manifest["files"]["weights.bin"]["bytes"], 4096);
  EXPECT_EQ(first.manifest["files"]["weights.bin"]["xxh3"].get<std::string>().size(), 16u);
  EXPECT_EQ(PlanKey::from_json(first.manifest["key"], "manifest"), test_key());

  int calls = 0;
  const PlanEntry second = cache.get_or_build(test_key(), [&](const fs::path&) { ++calls; }, &built);
  EXPECT_FALSE(built);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(second.dir, first.dir);
  ASSERT_TRUE(cache.find(test_key()).has_value());
}

TEST_F(PlanCacheTest, DigestChangesWithEveryKeyField) {
  const std::string base = test_key().digest();
  EXPECT_TRUE(is_plan_digest(base)) << base;
  EXPECT_EQ(test_key().digest(), base);
  for (std::string PlanKey::*field : {&PlanKey::kind, &PlanKey::compiler_version, &PlanKey::isa, &PlanKey::backend,
                                      &PlanKey::config_fingerprint, &PlanKey::weights_fingerprint, &PlanKey::shapes,
                                      &PlanKey::shard, &PlanKey::program}) {
    PlanKey key = test_key();
    key.*field += "x";
    EXPECT_NE(key.digest(), base) << key.to_json().dump();
  }
  EXPECT_EQ(test_key().to_json().size(), 9u);
}

struct Corruption {
  const char* name;
  void (*apply)(const fs::path& dir);
  const char* expected;  // in the warning
};

class PlanCacheCorruptionTest : public PlanCacheTest, public testing::WithParamInterface<Corruption> {};

TEST_P(PlanCacheCorruptionTest, IsWarnedAndRebuilt) {
  PlanCache cache(root_, "1.0");
  const PlanEntry entry = build(cache, test_key());
  GetParam().apply(entry.dir);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.find(test_key()).has_value());
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("warning: plan cache entry " + entry.dir.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find(GetParam().expected), std::string::npos) << warning;

  bool built = false;
  testing::internal::CaptureStderr();
  const PlanEntry rebuilt = build(cache, test_key(), &built);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(built);
  EXPECT_EQ(rebuilt.dir, entry.dir);
  testing::internal::CaptureStderr();
  EXPECT_TRUE(cache.find(test_key()).has_value());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, PlanCacheCorruptionTest,
    testing::Values(
        Corruption{"truncated", [](const fs::path& dir) { fs::resize_file(dir / "weights.bin", 100); },
                   "weights.bin: 100 bytes, the manifest says 4096"},
        Corruption{"flipped_byte",
                   [](const fs::path& dir) {
                     std::fstream file(dir / "weights.bin", std::ios::in | std::ios::out | std::ios::binary);
                     file.seekp(1000);
                     file.put('\x5b');
                   },
                   "weights.bin: xxh3"},
        Corruption{"unparsable_manifest", [](const fs::path& dir) { write_file(dir / "manifest.json", "{\"key\": "); },
                   "manifest.json: invalid JSON"},
        Corruption{"deeply_nested_manifest",
                   [](const fs::path& dir) {
                     write_file(dir / "manifest.json", std::string(100000, '[') + std::string(100000, ']'));
                   },
                   "manifest.json: nested deeper than 64 levels"},
        Corruption{"missing_file", [](const fs::path& dir) { fs::remove(dir / "graph" / "plan.json"); },
                   "graph/plan.json: missing"}),
    [](const testing::TestParamInfo<Corruption>& info) { return std::string(info.param.name); });

TEST_F(PlanCacheTest, OtherVersionsAreNotFoundAndPruneRemovesThem) {
  PlanCache old_cache(root_, "1.0");
  const PlanEntry old_entry = build(old_cache, test_key("1.0"));
  PlanCache cache(root_, "2.0");
  EXPECT_FALSE(cache.find(test_key("2.0")).has_value());
  EXPECT_FALSE(cache.find(test_key("1.0")).has_value());
  EXPECT_THROW(cache.get_or_build(test_key("1.0"), build_plan), Error);
  EXPECT_TRUE(cache.list(false, true).empty());
  EXPECT_EQ(cache.list(true, true).size(), 1u);

  // An old entry copied where the new version's entry belongs is foreign, not trusted.
  const fs::path planted = cache.entry_dir(test_key("2.0"));
  fs::create_directories(planted.parent_path());
  fs::copy(old_entry.dir, planted, fs::copy_options::recursive);
  testing::internal::CaptureStderr();
  bool built = false;
  build(cache, test_key("2.0"), &built);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("ignored: its manifest's key has digest"), std::string::npos);
  EXPECT_TRUE(built);

  const PruneReport report = cache.prune({});
  ASSERT_EQ(report.removed.size(), 1u);
  EXPECT_EQ(report.removed[0].path, old_entry.dir);
  EXPECT_EQ(report.removed[0].reason, "compiler version 1.0");
  EXPECT_GT(report.bytes_freed, 4096u);
  EXPECT_FALSE(fs::exists(root_ / "1.0"));
  EXPECT_TRUE(cache.find(test_key("2.0")).has_value());
}

TEST_F(PlanCacheTest, ConcurrentProcessesBuildOnce) {
  const fs::path counter = root_.string() + "_builds";
  const fs::path go = root_.string() + "_go";
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      while (!fs::exists(go)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      int status = 1;
      try {
        PlanCache cache(root_, "1.0");
        const PlanEntry entry = cache.get_or_build(test_key(), [&](const fs::path& dir) {
          const int fd = ::open(counter.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
          if (::write(fd, "b", 1) != 1) ::_exit(3);
          ::close(fd);
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          build_plan(dir);
        });
        if (entry.dir == cache.entry_dir(test_key()) && cache.find(test_key())) status = 0;
      } catch (...) {
        status = 2;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  write_file(go, "");
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(read_file(counter), "b");
  fs::remove(counter);
  fs::remove(go);
}

TEST_F(PlanCacheTest, FailedBuildStoresNothing) {
  PlanCache cache(root_, "1.0");
  EXPECT_THROW(cache.get_or_build(test_key(),
                                  [](const fs::path& dir) {
                                    build_plan(dir);
                                    throw std::runtime_error("out of memory packing weights");
                                  }),
               std::runtime_error);
  EXPECT_FALSE(cache.find(test_key()).has_value());
  for (const auto& item : fs::directory_iterator(root_ / "1.0"))
    EXPECT_EQ(item.path().extension(), ".lock") << item.path();
}

TEST_F(PlanCacheTest, PruneRemovesLeftoversThenByLastUse) {
  PlanCache cache(root_, "1.0");
  const PlanEntry old_entry = build(cache, test_key());
  PlanKey fresh_key = test_key();
  fresh_key.shapes = "prefill=128;cache=2048";
  const PlanEntry fresh = build(cache, fresh_key);
  age(old_entry.file("manifest.json"), 10 * 86400);
  const fs::path abandoned = cache.make_temp_dir(test_key().digest());
  write_file(abandoned / "weights.bin", "partial");
  age(abandoned, 3600);
  const fs::path running = cache.make_temp_dir(fresh_key.digest());

  const PruneReport dry = cache.prune({5.0, std::nullopt, true});
  ASSERT_EQ(dry.removed.size(), 2u);
  EXPECT_TRUE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(old_entry.dir));

  const PruneReport report = cache.prune({5.0, std::nullopt, false});
  ASSERT_EQ(report.removed.size(), 2u);
  EXPECT_EQ(report.removed[0].reason, "abandoned temporary folder");
  EXPECT_EQ(report.removed[1].path, old_entry.dir);
  EXPECT_EQ(report.removed[1].reason.rfind("unused since ", 0), 0u) << report.removed[1].reason;
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_TRUE(cache.find(fresh_key).has_value());

  EXPECT_EQ(cache.prune({std::nullopt, 0, false}).removed.size(), 1u);
  EXPECT_TRUE(cache.list(false, true).empty());
}

TEST_F(PlanCacheTest, HitsRecordLastUse) {
  PlanCache cache(root_, "1.0");
  const PlanEntry entry = build(cache, test_key());
  age(entry.file("manifest.json"), 86400);
  const int64_t before = cache.list(false, false).at(0).last_used;
  ASSERT_TRUE(cache.find(test_key()).has_value());
  EXPECT_GE(cache.list(false, false).at(0).last_used, before + 86000);
}

TEST_F(PlanCacheTest, ListAndRemove) {
  PlanCache cache(root_, "1.0");
  const PlanEntry entry = build(cache, test_key());
  std::vector<PlanEntryInfo> entries = cache.list(false, true);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].digest, test_key().digest());
  EXPECT_EQ(entries[0].problem, "");
  EXPECT_EQ(entries[0].manifest["label"], "tiny-llama");
  EXPECT_GT(entries[0].bytes, 4096u);
  fs::resize_file(entry.file("weights.bin"), 1);
  EXPECT_NE(cache.list(false, false).at(0).problem.find("weights.bin: 1 bytes"), std::string::npos);
  EXPECT_EQ(cache.remove(entries[0]), entries[0].bytes - 4095);
  EXPECT_FALSE(fs::exists(entry.dir));
}

// An entry whose manifest cannot be parsed at all (here: nested 100,000 levels deep, which once
// crashed every reader) is listed with its problem and removed by prune.
TEST_F(PlanCacheTest, UnparsableEntriesAreListedAndPruned) {
  PlanCache cache(root_, "1.0");
  const PlanEntry entry = build(cache, test_key());
  write_file(entry.file("manifest.json"), "{\"key\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const std::vector<PlanEntryInfo> entries = cache.list(false, false);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(entries[0].problem.find("nested deeper than 64 levels"), std::string::npos) << entries[0].problem;
  const PruneReport report = cache.prune({std::nullopt, std::nullopt, false});
  ASSERT_EQ(report.removed.size(), 1u);
  EXPECT_EQ(report.removed[0].path, entry.dir);
  EXPECT_FALSE(fs::exists(entry.dir));
}

TEST_F(PlanCacheTest, AManifestFieldOfAnotherTypeIsAProblemNotACrash) {
  PlanCache cache(root_, "1.0");
  const PlanEntry entry = build(cache, test_key());
  Json manifest = read_json_file(entry.file("manifest.json").string(), ErrorKind::kIo);
  manifest["digest"] = 1;
  manifest["files"]["weights.bin"] = "a string";
  write_file(entry.file("manifest.json"), manifest.dump());
  const std::vector<PlanEntryInfo> entries = cache.list(false, false);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(entries[0].problem.find("\"digest\" (missing or not a string) is not the digest"), std::string::npos)
      << entries[0].problem;
}

TEST(PlanCacheRoot, FollowsTheEnvironment) {
  const auto set = [](const char* name, const char* value) {
    if (value != nullptr) ::setenv(name, value, 1); else ::unsetenv(name);
  };
  const char* saved[3] = {std::getenv("CANRUN_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME")};
  const std::string kept[3] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "", saved[2] ? saved[2] : ""};
  set("CANRUN_CACHE_DIR", "/tmp/plans");
  set("XDG_CACHE_HOME", "/xdg");
  set("HOME", "/home/user");
  EXPECT_EQ(PlanCache::default_root(), "/tmp/plans");
  set("CANRUN_CACHE_DIR", nullptr);
  EXPECT_EQ(PlanCache::default_root(), "/xdg/canrun/plans");
  set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(PlanCache::default_root(), "/home/user/.cache/canrun/plans");
  const char* names[3] = {"CANRUN_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) set(names[i], saved[i] ? kept[i].c_str() : nullptr);
}

}  // namespace
}  // namespace canrun
