#include "serve/server.h"

#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <iostream>
#include <thread>

#include "lab/catalog.h"
#include "serve/api.h"
#include "serve/http_error.h"
#include "serve/response_cache.h"
#include "serve/snapshot.h"
#include "serve/static_files.h"

namespace canrun {
namespace {

// Longer query strings are refused before any parsing (each parameter is short anyway).
constexpr size_t kMaxQueryLength = 2048;

const char* const kJson = "application/json; charset=utf-8";

std::string serialize(const Json& body) { return body.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_body(httplib::Response& response, int status, const std::string& body) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  response.set_content(body, kJson);
}

void send_json(httplib::Response& response, int status, const Json& body) {
  send_body(response, status, serialize(body));
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, status, {{"error", message}, {"status", status}});
}

using ApiHandler = Json (*)(const DatasetSnapshot&, const QueryParams&);

// The path and the parameters in name order, each part length-prefixed so that no two
// different requests share a key.
std::string cache_key(const httplib::Request& request) {
  std::string key = request.path;
  for (const auto& [name, value] : request.params)
    key += "\n" + std::to_string(name.size()) + ":" + name + std::to_string(value.size()) + ":" + value;
  return key;
}

// Answers from the cache when the same request was answered on the same snapshot; errors are
// cheap and are not kept.
httplib::Server::Handler api_route(const SnapshotStore& store, ResponseCache& cache, ApiHandler handler) {
  return [&store, &cache, handler](const httplib::Request& request, httplib::Response& response) {
    const std::shared_ptr<const DatasetSnapshot> snapshot = store.current();
    const std::string key = cache_key(request);
    try {
      std::shared_ptr<const std::string> body = cache.find(snapshot->generation, key);
      if (!body) {
        body = std::make_shared<const std::string>(serialize(handler(*snapshot, request.params)));
        cache.insert(snapshot->generation, key, body);
      }
      send_body(response, 200, *body);
    } catch (const HttpError& e) {
      send_error(response, e.status(), e.what());
    }
  };
}

void report_snapshot(const SnapshotStore& store, const char* what) {
  const auto snapshot = store.current();
  size_t rows = 0;
  for (const PairRows& pair : snapshot->pairs) rows += pair.rows.size();
  std::cerr << what << " " << store.data_dir() << ": " << rows << " rows in " << snapshot->pairs.size()
            << " version-pair files, " << snapshot->catalog.size() << " catalog models"
            << (snapshot->errors.empty() ? "" : "; errors: " + join(snapshot->errors)) << std::endl;
}

timespec to_timespec(double seconds) {
  const double whole = std::floor(seconds);
  return {static_cast<time_t>(whole), static_cast<long>((seconds - whole) * 1e9)};
}

}  // namespace

void serve(const ServeOptions& options, const std::function<void(const std::string& url)>& on_listening) {
  // Signals go to the housekeeping thread only: block them here, before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  SnapshotStore store(options.data_dir, options.catalog.empty() ? default_catalog_path() : options.catalog);
  const std::string static_dir = options.static_dir.empty() ? default_static_dir() : options.static_dir;
  ResponseCache cache(static_cast<size_t>(options.cache_mib) << 20);

  httplib::Server server;
  const int threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib's default also sets SO_REUSEPORT, which would let a second server share a busy port.
  server.set_socket_options([](int socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Headers and body go out in separate writes: with Nagle's algorithm on, the body waits for the
  // client's delayed ACK of the headers (40 ms on Linux) on every keep-alive request.
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1000);
  server.set_payload_max_length(64 * 1024);
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                              {"Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"}});
  server.set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    const size_t query = request.target.find('?');
    if (query != std::string::npos && request.target.size() - query - 1 > kMaxQueryLength) {
      send_error(response, 414, "query string longer than " + std::to_string(kMaxQueryLength) + " characters");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server.Get("/api/rows", api_route(store, cache, api_rows));
  server.Get("/api/model", api_route(store, cache, api_model));
  server.Get("/api/pairs", api_route(store, cache, api_pairs));
  server.Get("/api/catalog", api_route(store, cache, api_catalog));
  server.Get(R"(/api(/.*)?)", [](const httplib::Request& request, httplib::Response& response) {
    send_error(response, 404,
               "no API endpoint " + request.path.substr(0, 100) + " (endpoints: /api/rows, /api/model, /api/pairs, "
               "/api/catalog)");
  });
  server.Get(".*", [&static_dir](const httplib::Request& request, httplib::Response& response) {
    try {
      StaticFile file = load_static_file(static_dir, request.path);
      response.set_header("Cache-Control", "no-cache");
      response.set_content(std::move(file.body), file.content_type);
    } catch (const HttpError& e) {
      send_error(response, e.status(), e.what());
    }
  });
  // Whatever httplib refuses itself (bad request line, unknown method, URI over its limit) or a
  // handler fails with still answers in JSON.
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    send_error(response, 500, message);
  });
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string reason = response.status == 414   ? "request line too long"
                               : response.status == 405 ? "method not allowed: the API is read-only (GET)"
                                                         : "request refused";
    send_error(response, response.status, reason);
    return httplib::Server::HandlerResponse::Handled;
  }));

  int port = options.port;
  if (port == 0) port = server.bind_to_any_port(options.host);
  else if (!server.bind_to_port(options.host, port)) port = -1;
  if (port < 0)
    fail(ErrorKind::kUsage, "--host " + options.host + " --port " + std::to_string(options.port) +
                                ": cannot listen there (in use, or not an address of this machine)");

  std::atomic<bool> done = false;
  std::thread housekeeping([&] {
    const timespec interval = to_timespec(options.reload_interval_s);
    while (!done) {
      if (sigtimedwait(&stop_signals, nullptr, &interval) > 0) {
        // stop() does nothing until the listening loop runs, so repeat it until the loop ends.
        while (!done) {
          server.stop();
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return;
      }
      if (store.refresh()) report_snapshot(store, "reloaded");
    }
  });
  report_snapshot(store, "loaded");
  const std::string shown_host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  on_listening("http://" + shown_host + ":" + std::to_string(port) + "/");
  server.listen_after_bind();
  done = true;
  housekeeping.join();
}

}  // namespace canrun
