// The page's static files (web/: index.html, app.css, app.js), served as they are.
#pragma once

#include <string>

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

}  // namespace canrun
