// canrun diff's comparison of two version pairs: each kind of change, what counts as a
// regression, the token cross-check, and the errors for pairs that are not there.
#include <gtest/gtest.h>

#include "lab/version_diff.h"
#include "serve_test_data.h"

namespace canrun {
namespace {

using serve_test::row;

ResultRow in_pair(ResultRow r, const std::string& compiler) {
  r.compiler_version = compiler;
  return r;
}

const ModelDiff& model(const VersionDiff& diff, const std::string& id) {
  for (const ModelDiff& m : diff.models)
    if (m.model_id == id) return m;
  throw std::runtime_error("no " + id);
}

TEST(VersionDiff, NamesEachChangeAndCountsRegressions) {
  const serve_test::Folder folder("version_diff");
  ResultRow same_tokens = row("org/tokens", "PASS", 1.0, 1), other_tokens = same_tokens;
  same_tokens.generated_token_ids = std::vector<int32_t>{1, 2, 3};
  other_tokens.generated_token_ids = std::vector<int32_t>{1, 2, 4};
  write_dataset((folder.results / "canrun-0.1.0__ref-x86_64.parquet").string(),
                {row("org/broke", "PASS", 1.0, 1), row("org/fixed", "FAIL_LOAD", 1.0, 1),
                 row("org/slower", "PASS", 2.0, 1), row("org/faster", "PASS", 4.0, 1),
                 row("org/cores", "PASS", 1.0, 1), row("org/gone", "PASS", 1.0, 1),
                 row("org/steady", "PASS", 1.0, 1), same_tokens});
  write_dataset((folder.results / "canrun-0.2.0__ref-x86_64.parquet").string(),
                {in_pair(row("org/broke", "TIMEOUT", 600.0, 1), "canrun-0.2.0"),
                 in_pair(row("org/fixed", "PASS", 1.0, 1), "canrun-0.2.0"),
                 in_pair(row("org/slower", "PASS", 4.0, 1), "canrun-0.2.0"),
                 in_pair(row("org/faster", "PASS", 1.0, 1), "canrun-0.2.0"),
                 in_pair(row("org/cores", "PASS", 1.1, 2), "canrun-0.2.0"),
                 in_pair(row("org/new", "PASS", 1.0, 1), "canrun-0.2.0"),
                 in_pair(row("org/steady", "PASS", 1.1, 1), "canrun-0.2.0"), in_pair(other_tokens, "canrun-0.2.0")});
  const VersionDiff diff =
      diff_versions({{folder.results.string()}}, {"canrun-0.1.0", "ref-x86_64"}, {"canrun-0.2.0", "ref-x86_64"}, {});
  EXPECT_EQ(diff.models.size(), 9u);
  EXPECT_EQ(model(diff, "org/broke").changes, (std::vector<std::string>{"newly failing: PASS -> TIMEOUT"}));
  EXPECT_TRUE(model(diff, "org/broke").regression);
  EXPECT_EQ(model(diff, "org/fixed").changes, (std::vector<std::string>{"newly passing: FAIL_LOAD -> PASS"}));
  EXPECT_FALSE(model(diff, "org/fixed").regression);
  // Wall time 2 -> 4 s and memory 2 -> 4 MB (the rows' memory follows their time).
  EXPECT_EQ(model(diff, "org/slower").changes,
            (std::vector<std::string>{"wall time 2 s -> 4 s (2x)", "peak memory 0.002 GB -> 0.004 GB (2x)"}));
  EXPECT_TRUE(model(diff, "org/slower").regression);
  EXPECT_EQ(model(diff, "org/faster").changes.size(), 2u);
  EXPECT_FALSE(model(diff, "org/faster").regression);
  EXPECT_EQ(model(diff, "org/cores").changes, (std::vector<std::string>{"cores 1 -> 2"}));
  EXPECT_EQ(model(diff, "org/gone").changes, (std::vector<std::string>{"only in --from (PASS)"}));
  EXPECT_EQ(model(diff, "org/new").changes, (std::vector<std::string>{"only in --to (PASS)"}));
  EXPECT_TRUE(model(diff, "org/steady").changes.empty());  // 1.1x is inside both ratios
  EXPECT_EQ(model(diff, "org/tokens").tokens_agree, false);
  EXPECT_EQ(model(diff, "org/tokens").changes, (std::vector<std::string>{"generated tokens differ"}));
  EXPECT_EQ(model(diff, "org/steady").tokens_agree, std::nullopt);
  DiffOptions loose;
  loose.time_ratio = loose.memory_ratio = 3;
  EXPECT_FALSE(model(diff_versions({{folder.results.string()}}, {"canrun-0.1.0", "ref-x86_64"},
                                   {"canrun-0.2.0", "ref-x86_64"}, loose),
                     "org/slower")
                   .regression);
}

TEST(VersionDiff, PairsAreParsedAndMissingOnesListTheOthers) {
  EXPECT_EQ(parse_version_pair("canrun-0.1.0__cpu-x86_64-avx2-fma", "--from").library, "cpu-x86_64-avx2-fma");
  for (const char* bad : {"canrun-0.1.0", "__cpu", "canrun__", "a__b__c"})
    EXPECT_THROW(parse_version_pair(bad, "--from"), Error) << bad;
  const serve_test::Folder folder("version_diff_missing");
  try {
    diff_versions({{folder.results.string()}}, {"canrun-0.1.0", "ref-x86_64"}, {"canrun-9", "cpu"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--to canrun-9__cpu: no such version pair"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("present: canrun-0.1.0__ref-x86_64"), std::string::npos) << e.what();
  }
  DiffOptions bad;
  bad.time_ratio = 0.5;
  EXPECT_THROW(diff_versions({{folder.results.string()}}, {"canrun-0.1.0", "ref-x86_64"},
                             {"canrun-0.1.0", "ref-x86_64"}, bad),
               Error);
}

}  // namespace
}  // namespace canrun
