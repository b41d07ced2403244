// `canrun serve`: the page and the JSON API over HTTP. A connection gate (one thread) takes
// the connections and reads requests whole; workers answer them with cpp-httplib's routing;
// a housekeeping thread reloads the dataset when its files change and stops the server on a
// signal.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lab/results_dir.h"

namespace canrun {

struct ServeOptions {
  std::string data_dir;  // --data; empty: dataset_folders' default (the shipped dataset and your results)
  std::string catalog;     // empty: default_catalog_path()
  std::string static_dir;  // empty: default_static_dir()
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  double reload_interval_s = 1.0;
  int cache_mib = 64;  // bound of the kept API answers; 0 answers every request afresh
  int threads = 64;  // workers answering requests; waiting on a client never holds one
  int max_connections = 1024;  // open at once; past it a new connection gets 503
  double header_timeout_s = 10;  // for a whole request (line, headers, body) to arrive
  double idle_timeout_s = 5;  // a keep-alive connection's wait for its next request
  std::vector<std::string> allowed_hosts;  // Host names answered besides loopback ones (--allow-host)
};

// Serves until SIGINT or SIGTERM; calls `on_listening` with the page's URL once bound. Throws
// a usage error when the port cannot be bound, an --allow-host value is malformed, the process
// may not open enough descriptors for max_connections, or the catalog cannot be read.
void serve(const ServeOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace canrun
