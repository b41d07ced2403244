// The Space's snapshot store reloads changed files, and a corrupt file neither throws nor loses
// the rows last read from it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <thread>

#include "lab/results_dir.h"
#include "serve/snapshot.h"
#include "serve/static_files.h"
#include "serve/http_error.h"
#include "serve_test_data.h"

namespace canrun {
namespace {

using serve_test::Folder;
using serve_test::row;
namespace fs = std::filesystem;

TEST(ServeSnapshot, LoadsNewestPairFirstAndReloadsOnlyOnChange) {
  Folder folder("snapshot");
  SnapshotStore store({{folder.results.string()}}, folder.catalog.string());
  const auto first = store.current();
  ASSERT_EQ(first->pairs.size(), 1u);
  EXPECT_EQ(first->pairs[0].rows.size(), 5u);
  EXPECT_TRUE(first->errors.empty());
  EXPECT_FALSE(store.refresh());
  EXPECT_EQ(store.current(), first);

  ResultRow newer = row("org/a", "PASS", 1.0, 1);
  newer.library_version = "ref-avx2";
  newer.timestamp += std::chrono::hours(1);
  write_dataset((folder.results / "canrun-0.1.0__ref-avx2.parquet").string(), {newer});
  EXPECT_TRUE(store.refresh());
  const auto second = store.current();
  ASSERT_EQ(second->pairs.size(), 2u);
  EXPECT_EQ(second->pairs[0].pair.library, "ref-avx2");
  EXPECT_EQ(first->pairs.size(), 1u);  // a snapshot already handed out never changes
}

TEST(ServeSnapshot, CorruptFileKeepsItsLastGoodRowsAndReportsTheError) {
  Folder folder("corrupt");
  SnapshotStore store({{folder.results.string()}}, folder.catalog.string());
  std::ofstream(folder.pair_file(), std::ios::trunc) << "not parquet";
  EXPECT_TRUE(store.refresh());
  const auto snapshot = store.current();
  ASSERT_EQ(snapshot->pairs.size(), 1u);
  EXPECT_EQ(snapshot->pairs[0].rows.size(), 5u);
  ASSERT_EQ(snapshot->errors.size(), 1u);
  EXPECT_NE(snapshot->errors[0].find("canrun-0.1.0__ref-x86_64.parquet"), std::string::npos);

  folder.write_rows({row("org/a", "PASS", 1.0, 1)});
  EXPECT_TRUE(store.refresh());
  EXPECT_EQ(store.current()->pairs[0].rows.size(), 1u);
  EXPECT_TRUE(store.current()->errors.empty());
}

TEST(ServeSnapshot, ASweepShardsPartJoinsItsPairNewestRowWinning) {
  Folder folder("parts");
  SnapshotStore store({{folder.results.string()}}, folder.catalog.string());
  ResultRow newer = row("org/a", "OOM", 2.0, 1);
  newer.timestamp += std::chrono::hours(1);
  record_row(folder.results.string(), newer, "part-1-of-2");
  record_row(folder.results.string(), row("org/new", "PASS", 1.0, 1), "part-2-of-2");
  EXPECT_TRUE(store.refresh());
  const auto snapshot = store.current();
  ASSERT_EQ(snapshot->pairs.size(), 1u);
  const PairRows& pair = snapshot->pairs[0];
  EXPECT_EQ(pair.rows.size(), 6u);
  ASSERT_NE(pair.row_of("org/a"), nullptr);
  EXPECT_EQ(pair.row_of("org/a")->result, "OOM");
  EXPECT_FALSE(store.refresh());

  // The download is the pair's rows as the page shows them: file and parts in one.
  const StaticFile download = dataset_file(*snapshot, pair.file_name);
  const fs::path copy = folder.root / "download" / pair.file_name;
  fs::create_directories(copy.parent_path());
  std::ofstream(copy, std::ios::binary) << download.body;
  EXPECT_EQ(read_dataset(copy.string()).size(), 6u);
  EXPECT_THROW(dataset_file(*snapshot, "other__pair.parquet"), HttpError);
}

TEST(ServeSnapshot, EmptyOrMissingFolderServesTheCatalogAlone) {
  Folder folder("empty");
  fs::remove_all(folder.results);
  SnapshotStore store({{folder.results.string()}}, folder.catalog.string());
  EXPECT_TRUE(store.current()->pairs.empty());
  EXPECT_EQ(store.current()->catalog.size(), 5u);
  EXPECT_THROW(SnapshotStore({{(folder.root / "none").string()}}, (folder.root / "no_catalog.jsonl").string()), Error);
}

TEST(ServeStaticFiles, ServesFilesInsideTheFolderOnly) {
  Folder folder("static");
  const fs::path web = folder.root / "web";
  fs::create_directories(web / "sub");
  std::ofstream(web / "index.html") << "<!doctype html>";
  std::ofstream(web / "sub" / "app.js") << "1";
  fs::create_symlink(folder.catalog, web / "outside.css");
  const StaticFile index = load_static_file(web.string(), "/");
  EXPECT_EQ(index.body, "<!doctype html>");
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(load_static_file(web.string(), "/sub/app.js").content_type, "text/javascript; charset=utf-8");
  const auto status = [&](const std::string& path) {
    try {
      load_static_file(web.string(), path);
    } catch (const HttpError& e) {
      return e.status();
    }
    return 200;
  };
  EXPECT_EQ(status("/../catalog.jsonl"), 403);
  EXPECT_EQ(status("/sub/../../catalog.jsonl"), 403);
  EXPECT_EQ(status("/outside.css"), 403);
  EXPECT_EQ(status("/missing.css"), 404);
  EXPECT_EQ(status("/sub"), 404);
  EXPECT_EQ(status("/a%2f..%2fb"), 404);
  EXPECT_EQ(status("/..\\catalog.jsonl"), 404);  // one odd name on POSIX, not a parent
}

}  // namespace
}  // namespace canrun
