// The page's static files (web/: index.html, app.css, app.js), served as they are.
#pragma once

#include <string>

#include "serve/snapshot.h"

namespace canrun {

struct StaticFile {
  std::string body;
  std::string content_type;
};

// $CANRUN_WEB_DIR if set, else web/ of the source tree canrun was built from.
std::string default_static_dir();

// The file that URL path `path` names under `root` ("/" is index.html). Throws HttpError 403
// for a path that would leave `root` (".." segments, links pointing out) and 404 for a path
// with characters no file here has, or no such file.
StaticFile load_static_file(const std::string& root, const std::string& path);

// A version pair's rows in the snapshot as a Parquet file, by the name the snapshot lists it
// under ("<compiler>__<library>.parquet": the pair's file and its shards' parts combined);
// HttpError 404 for any other name.
StaticFile dataset_file(const DatasetSnapshot& snapshot, const std::string& name);

}  // namespace canrun
