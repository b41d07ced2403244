// A request target of the Space ("/api/rows?task=...&sort=...", "/app.js", "/../x"): the path
// decoded and the query parsed as the server does, then the API endpoint it names answered on a
// small dataset, or the static file it names looked up under web/.
#include <httplib.h>

#include "fuzz_support.h"
#include "serve/api.h"
#include "serve/snapshot.h"
#include "serve/static_files.h"
#include "../tests/unit/serve_test_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const canrun::serve_test::Folder folder("fuzz");
  static const canrun::SnapshotStore store({{folder.results.string()}}, folder.catalog.string());
  static const std::string web = std::string(CANRUN_SOURCE_DIR) + "/web";
  const std::string target(reinterpret_cast<const char*>(data), size);
  const size_t question = target.find('?');
  const std::string path = httplib::detail::decode_url(target.substr(0, question), false);
  httplib::Params params;
  if (question != std::string::npos) httplib::detail::parse_query_text(target.substr(question + 1), params);
  const canrun::QueryParams query(params.begin(), params.end());
  // As the server answers: JSON with invalid UTF-8 replaced.
  const auto answer = [](const canrun::Json& body) { (void)body.dump(-1, ' ', false, canrun::Json::error_handler_t::replace); };
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const auto snapshot = store.current();
    if (path == "/api/rows") answer(canrun::api_rows(*snapshot, query));
    else if (path == "/api/model") answer(canrun::api_model(*snapshot, query));
    else if (path == "/api/pairs") answer(canrun::api_pairs(*snapshot, query));
    else if (path == "/api/catalog") answer(canrun::api_catalog(*snapshot, query));
    else (void)canrun::load_static_file(web, path);
  });
  return 0;
}
