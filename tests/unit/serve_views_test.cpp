// The Space's lists: parameter validation, views over catalog and dataset, filters and sorting.
#include <gtest/gtest.h>

#include <unistd.h>

#include "serve/api.h"
#include "serve/http_error.h"
#include "serve/views.h"
#include "serve_test_data.h"

namespace canrun {
namespace {

using serve_test::Folder;

std::vector<std::string> ids(const Json& response) {
  std::vector<std::string> result;
  for (const Json& row : response["rows"]) result.push_back(row["model_id"]);
  return result;
}

void expect_http_error(const std::function<void()>& call, int status, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "expected HTTP " << status;
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), status);
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

class ServeViews : public ::testing::Test {
 protected:
  Folder folder{"views"};
  SnapshotStore store{{{folder.results.string()}}, folder.catalog.string()};
  Json rows(const QueryParams& params) { return api_rows(*store.current(), params); }
};

TEST_F(ServeViews, SelectedIsTheCuratedListInDownloadsOrderWithReasons) {
  const Json response = rows({});
  EXPECT_EQ(response["view"], "selected");
  EXPECT_EQ(ids(response), (std::vector<std::string>{"org/b", "org/a", "org/c"}));
  EXPECT_EQ(response["pair"]["compiler"], "canrun-0.1.0");
  const Json& untested = response["rows"][2];
  EXPECT_TRUE(untested["result"].is_null());
  EXPECT_EQ(untested["reason"], "selected, not checked yet on canrun-0.1.0 / ref-x86_64");
  EXPECT_EQ(response["rows"][0]["reason"], "TIMEOUT because of test");
}

TEST_F(ServeViews, DownloadsListsTheWholeRankingTrendingIsEmptyWithItsNote) {
  EXPECT_EQ(ids(rows({{"view", "downloads"}})), (std::vector<std::string>{"org/b", "org/a", "org/c", "org/d"}));
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"task", "image-text-to-text"}})), std::vector<std::string>{"org/vlm"});
  const Json trending = rows({{"view", "trending"}});
  EXPECT_EQ(trending["total"], 0);
  EXPECT_EQ(trending["ranking"]["note"], "no trending signal");
}

TEST_F(ServeViews, TestedHasEveryRowOfTheTaskIncludingModelsOutsideTheCatalog) {
  const Json response = rows({{"view", "tested"}});
  EXPECT_EQ(ids(response), (std::vector<std::string>{"org/a", "org/b", "org/d", "org/local"}));
  EXPECT_FALSE(response["rows"][3]["in_catalog"]);
}

TEST_F(ServeViews, SearchAndResultFilter) {
  EXPECT_EQ(ids(rows({{"view", "tested"}, {"q", "LOC"}})), std::vector<std::string>{"org/local"});
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"result", "UNTESTED"}})), std::vector<std::string>{"org/c"});
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"result", "PASS"}})), std::vector<std::string>{"org/a"});
}

TEST_F(ServeViews, SortsByAnyColumnWithMissingValuesLast) {
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"sort", "wall_time_s"}})),
            (std::vector<std::string>{"org/d", "org/a", "org/b", "org/c"}));
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"sort", "wall_time_s"}, {"order", "desc"}})),
            (std::vector<std::string>{"org/b", "org/a", "org/d", "org/c"}));
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"sort", "cores"}, {"order", "desc"}})),
            (std::vector<std::string>{"org/b", "org/a", "org/c", "org/d"}));
  EXPECT_EQ(ids(rows({{"view", "tested"}, {"sort", "result"}})),
            (std::vector<std::string>{"org/d", "org/local", "org/a", "org/b"}));
  EXPECT_EQ(ids(rows({{"view", "downloads"}, {"order", "desc"}})),
            (std::vector<std::string>{"org/c", "org/a", "org/b", "org/d"}));
  EXPECT_EQ(ids(rows({{"view", "tested"}, {"order", "desc"}})),
            (std::vector<std::string>{"org/local", "org/d", "org/b", "org/a"}));
}

TEST_F(ServeViews, Pages) {
  const Json page = rows({{"view", "downloads"}, {"offset", "1"}, {"limit", "2"}});
  EXPECT_EQ(page["total"], 4);
  EXPECT_EQ(ids(page), (std::vector<std::string>{"org/a", "org/c"}));
  EXPECT_EQ(rows({{"view", "downloads"}, {"offset", "99"}})["rows"].size(), 0u);
}

TEST_F(ServeViews, BadParametersNameTheParameter) {
  expect_http_error([&] { rows({{"view", "popular"}}); }, 400, "parameter 'view': 'popular' is not one of selected");
  expect_http_error([&] { rows({{"task", "audio"}}); }, 400, "parameter 'task'");
  expect_http_error([&] { rows({{"result", "MAYBE"}}); }, 400, "parameter 'result'");
  expect_http_error([&] { rows({{"sort", "color"}}); }, 400, "parameter 'sort'");
  expect_http_error([&] { rows({{"limit", "0"}}); }, 400, "parameter 'limit': '0' is not an integer from 1 to 1000");
  expect_http_error([&] { rows({{"limit", "12abc"}}); }, 400, "parameter 'limit'");
  expect_http_error([&] { rows({{"offset", "-1"}}); }, 400, "parameter 'offset'");
  expect_http_error([&] { rows({{"colour", "red"}}); }, 400, "unknown parameter 'colour' for /api/rows");
  expect_http_error([&] { rows({{"view", "tested"}, {"view", "selected"}}); }, 400, "'view' is given more than once");
  expect_http_error([&] { rows({{"q", std::string(500, 'x')}}); }, 400, "parameter 'q' is longer than 200");
  expect_http_error([&] { rows({{"compiler", "canrun-9"}}); }, 400, "present: canrun-0.1.0 / ref-x86_64");
}

TEST_F(ServeViews, ModelDetail) {
  const Json a = api_model(*store.current(), {{"id", "org/a"}});
  EXPECT_EQ(a["row"]["result"], "PASS");
  EXPECT_EQ(a["catalog"]["downloads"]["rank"], 2);
  EXPECT_TRUE(a["untested_reason"].is_null());
  EXPECT_EQ(a["extra_packages"]["packages"].size(), 0u);
  EXPECT_EQ(a["plan_cache"]["command"], "canrun cache pull SOURCE");
  EXPECT_TRUE(a["plan_cache"]["available"]);
  EXPECT_NE(a["plan_cache"]["note"].get<std::string>().find("run with canrun-0.1.0"), std::string::npos);
  const Json c = api_model(*store.current(), {{"id", "org/c"}});
  EXPECT_TRUE(c["row"].is_null());
  EXPECT_EQ(c["untested_reason"], "selected, not checked yet on canrun-0.1.0 / ref-x86_64");
  expect_http_error([&] { api_model(*store.current(), {}); }, 400, "parameter 'id' is required");
  expect_http_error([&] { api_model(*store.current(), {{"id", "org/none"}}); }, 404, "model 'org/none'");
}

TEST_F(ServeViews, DiffOfTwoPairs) {
  // The newer pair: org/a now times out, org/b passes, org/local is gone.
  std::vector<ResultRow> newer = {serve_test::row("org/a", "TIMEOUT", 600.0, 1), serve_test::row("org/b", "PASS", 5.0, 1),
                                  serve_test::row("org/d", "EXCLUDED", 0.0, std::nullopt)};
  for (ResultRow& row : newer) row.compiler_version = "canrun-0.2.0";
  write_dataset((folder.results / "canrun-0.2.0__ref-x86_64.parquet").string(), newer);
  store.refresh();
  const auto diff = [&](const QueryParams& params) { return api_diff(*store.current(), params); };
  const Json changed = diff({{"from", "canrun-0.1.0__ref-x86_64"}, {"to", "canrun-0.2.0__ref-x86_64"}});
  EXPECT_EQ(changed["counts"]["models"], 5);
  EXPECT_EQ(changed["counts"]["changed"], 4);  // a, b, local, vlm; d is unchanged
  EXPECT_EQ(changed["counts"]["regressions"], 1);
  EXPECT_EQ(changed["models"].size(), 4u);
  EXPECT_EQ(changed["models"][0]["model_id"], "org/a");
  EXPECT_EQ(changed["models"][0]["changes"][0], "newly failing: PASS -> TIMEOUT");
  EXPECT_EQ(changed["models"][0]["to"]["error_message"], "TIMEOUT because of test");
  EXPECT_EQ(changed["to"]["file"], "canrun-0.2.0__ref-x86_64.parquet");
  EXPECT_EQ(diff({{"from", "canrun-0.1.0__ref-x86_64"}, {"to", "canrun-0.2.0__ref-x86_64"}, {"all", "1"}})["models"]
                .size(),
            5u);
  expect_http_error([&] { diff({{"to", "canrun-0.2.0__ref-x86_64"}}); }, 400, "parameter 'from' is required");
  expect_http_error([&] { diff({{"from", "canrun-0.1.0"}, {"to", "canrun-0.2.0__ref-x86_64"}}); }, 400,
                    "expected COMPILER__LIBRARY");
  expect_http_error([&] { diff({{"from", "canrun-0.1.0__ref-x86_64"}, {"to", "x__y"}}); }, 404,
                    "no version pair x__y; present: canrun-0.");
  expect_http_error(
      [&] {
        diff({{"from", "canrun-0.1.0__ref-x86_64"}, {"to", "canrun-0.2.0__ref-x86_64"}, {"time_ratio", "0.5"}});
      },
      400, "parameter 'time_ratio': '0.5' is not a number of at least 1");
}

TEST(ServeApi, ExtraPackagesOfAnExternalRunnerComeFromItsVersionPair) {
  const Json packages = extra_packages({"torch-2.5.1", "transformers-4.46.0"});
  EXPECT_EQ(packages["packages"], Json({"torch==2.5.1", "transformers==4.46.0"}));
  EXPECT_TRUE(plan_cache({"torch-2.5.1", "transformers-4.46.0"})["command"].is_null());
}

}  // namespace
}  // namespace canrun
