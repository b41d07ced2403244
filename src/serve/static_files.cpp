#include "serve/static_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "serve/http_error.h"
#include "serve/params.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

std::string content_type(const fs::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".html") return "text/html; charset=utf-8";
  if (extension == ".css") return "text/css; charset=utf-8";
  if (extension == ".js") return "text/javascript; charset=utf-8";
  if (extension == ".json") return "application/json; charset=utf-8";
  if (extension == ".svg") return "image/svg+xml";
  if (extension == ".png") return "image/png";
  return "application/octet-stream";
}

}  // namespace

std::string default_static_dir() {
  if (const char* dir = std::getenv("CANRUN_WEB_DIR"); dir && *dir) return dir;
  return CANRUN_WEB_DIR;
}

StaticFile load_static_file(const std::string& root, const std::string& path) {
  const std::string relative = path == "/" ? "index.html" : path.substr(path.starts_with("/") ? 1 : 0);
  for (const fs::path& part : fs::path(relative))
    if (part == ".." || part == ".") throw HttpError(403, "path '" + path + "' leaves the static folder");
  // Our files are named plainly; anything else (backslashes, NUL, '%', spaces) is not one of them.
  if (relative.empty() || relative.find("//") != std::string::npos ||
      relative.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/") !=
          std::string::npos)
    throw HttpError(404, "no file '" + path.substr(0, 100) + "' here");
  std::error_code error;
  const fs::path base = fs::canonical(root, error);
  if (error) throw HttpError(404, "no static folder " + root);
  const fs::path file = fs::weakly_canonical(base / relative, error);
  const std::string inside = base.string() + "/";
  if (error || !file.string().starts_with(inside))
    throw HttpError(403, "path '" + path + "' leaves the static folder");
  if (!fs::is_regular_file(file, error)) throw HttpError(404, "no file '" + path + "' here");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream body;
  body << in.rdbuf();
  if (!in) throw HttpError(404, "no file '" + path + "' here");
  return {body.str(), content_type(file)};
}

StaticFile dataset_file(const DatasetSnapshot& snapshot, const std::string& name) {
  std::vector<std::string> names;
  for (const PairRows& pair : snapshot.pairs) {
    names.push_back(pair.file_name);
    if (pair.file_name == name) return {dataset_bytes(name, pair.rows), "application/vnd.apache.parquet"};
  }
  throw HttpError(404, "no dataset file '" + name.substr(0, 100) + "' (files: " +
                           (names.empty() ? std::string("none") : join(names)) + ")");
}

}  // namespace canrun
