// `canrun serve`: the page and the JSON API over HTTP (cpp-httplib), with a housekeeping
// thread that reloads the dataset when its files change and stops the server on a signal.
#pragma once

#include <functional>
#include <string>

namespace canrun {

struct ServeOptions {
  std::string data_dir = "results";
  std::string catalog;     // empty: default_catalog_path()
  std::string static_dir;  // empty: default_static_dir()
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  double reload_interval_s = 1.0;
  int cache_mib = 64;  // bound of the kept API answers; 0 answers every request afresh
  int threads = 64;  // connections served at once; keep-alive holds a thread per connection
};

// Serves until SIGINT or SIGTERM; calls `on_listening` with the page's URL once bound. Throws
// a usage error when the port cannot be bound or the catalog cannot be read.
void serve(const ServeOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace canrun
