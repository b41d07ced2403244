// canrun serve: the Space, a web page and a read-only JSON API over the lab's dataset, reloaded
// when its files change.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "serve/server.h"

namespace canrun {

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve",
      "Serve the support lab's page and JSON API (/api/rows, /api/model, /api/pairs, /api/catalog) over the\n"
      "dataset folder, reloading it when its files change. Binds 127.0.0.1 unless --host says otherwise.");
  command->add_option("--data", options->data_dir, "Dataset folder (default results/; may be empty or missing)");
  command->add_option("--port", options->port, "TCP port (default 8080; 0 picks a free one)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--host", options->host, "Address to bind (default 127.0.0.1: this machine only)");
  command->add_option("--catalog", options->catalog, "Catalog file (default $CANRUN_CATALOG or data/catalog.jsonl)")
      ->check(CLI::ExistingFile);
  command->add_option("--static", options->static_dir,
                      "Folder of the page's files (default $CANRUN_WEB_DIR or web/ of the source tree)")
      ->check(CLI::ExistingDirectory);
  command->add_option("--reload-interval", options->reload_interval_s,
                      "Seconds between checks of the dataset files for changes (default 1)")
      ->check(CLI::Range(0.05, 3600.0));
  command->add_option("--cache-mib", options->cache_mib,
                      "MiB of API answers kept until the dataset changes (default 64; 0 keeps none)")
      ->check(CLI::Range(0, 65536));
  command->add_option("--threads", options->threads,
                      "Worker threads answering requests (default 64); a slow or idle client never holds one")
      ->check(CLI::Range(1, 1024));
  command->add_option("--max-connections", options->max_connections,
                      "Connections open at once (default 1024); past it a new one gets 503 with Retry-After")
      ->check(CLI::Range(1, 1000000));
  command->add_option("--header-timeout", options->header_timeout_s,
                      "Seconds for a whole request (line, headers, body) to arrive (default 10): from the\n"
                      "connection's opening for its first request, from the first byte for later ones. A request\n"
                      "cut short gets 408; a connection that sent nothing is closed")
      ->check(CLI::Range(0.1, 3600.0));
  command->add_option("--idle-timeout", options->idle_timeout_s,
                      "Seconds a keep-alive connection may wait for its next request (default 5)")
      ->check(CLI::Range(0.1, 3600.0));
  command->add_option("--allow-host", options->allowed_hosts,
                      "Also answer requests whose Host header names this host (repeatable). On a loopback\n"
                      "address only localhost, *.localhost, 127.x.y.z and [::1] are answered, against DNS\n"
                      "rebinding; on any other --host every Host is answered");
  command->callback([options] {
    serve(*options, [](const std::string& url) {
      std::cout << "serving the canrun Space at " << url << " (open it in a browser; Ctrl-C stops)" << std::endl;
    });
  });
}

}  // namespace canrun
