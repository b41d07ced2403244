#include "serve/server.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <iostream>
#include <optional>
#include <thread>

#include "lab/catalog.h"
#include "serve/api.h"
#include "serve/buffered_http_server.h"
#include "serve/connection_gate.h"
#include "serve/descriptor_limit.h"
#include "serve/host_guard.h"
#include "serve/http_error.h"
#include "serve/listener.h"
#include "serve/refusal_reply.h"
#include "serve/request_framing.h"
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

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_body(response, status, json_error_body(status, message));
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
  std::cerr << what << " " << folders_text(store.folders()) << ": " << rows << " rows in " << snapshot->pairs.size()
            << " version-pair files, " << snapshot->catalog.size() << " catalog models"
            << (snapshot->errors.empty() ? "" : "; errors: " + join(snapshot->errors)) << std::endl;
}

// Decided on the request line, before httplib (which refuses methods it does not know with 400).
GateReply method_not_allowed(std::string_view method) {
  const std::string message = "method " + std::string(method.substr(0, 32)) +
                              " is not allowed: the Space is read-only (GET, HEAD)";
  return {refusal_reply(405, message, {{"Allow", "GET, HEAD"}}), false};
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

  const std::vector<std::string> allowed_hosts = checked_allowed_hosts(options.allowed_hosts);
  GateLimits limits;
  limits.max_connections = static_cast<size_t>(options.max_connections);
  limits.header_timeout_s = options.header_timeout_s;
  limits.idle_timeout_s = options.idle_timeout_s;
  require_descriptors_for(limits.max_connections);

  std::optional<Listener> listener = Listener::open(options.host, options.port);
  if (!listener)
    fail(ErrorKind::kUsage, "--host " + options.host + " --port " + std::to_string(options.port) +
                                ": cannot listen there (in use, or not an address of this machine)");
  const HostGuard host_guard(is_loopback_host(listener->address()), allowed_hosts);

  SnapshotStore store(dataset_folders(options.data_dir),
                      options.catalog.empty() ? default_catalog_path() : options.catalog);
  const std::string static_dir = options.static_dir.empty() ? default_static_dir() : options.static_dir;
  ResponseCache cache(static_cast<size_t>(options.cache_mib) << 20);

  BufferedHttpServer server;
  server.set_keep_alive_max_count(1000);
  // Only the Keep-Alive header's hint (whole seconds); the gate enforces the idle timeout itself.
  server.set_keep_alive_timeout(static_cast<time_t>(options.idle_timeout_s));
  server.set_default_headers(httplib::Headers(security_headers().begin(), security_headers().end()));
  server.set_pre_routing_handler([&host_guard](const httplib::Request& request, httplib::Response& response) {
    if (const std::optional<HttpError> error = host_guard.refusal(request)) {
      send_error(response, error->status(), error->what());
      return httplib::Server::HandlerResponse::Handled;
    }
    const size_t query = request.target.find('?');
    if (query != std::string::npos && request.target.size() - query - 1 > kMaxQueryLength) {
      send_error(response, 414, "query string longer than " + std::to_string(kMaxQueryLength) + " characters");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server.Get("/api/rows", api_route(store, cache, api_rows));
  server.Get("/api/model", api_route(store, cache, api_model));
  server.Get("/api/training", api_route(store, cache, api_training));
  server.Get("/api/pairs", api_route(store, cache, api_pairs));
  server.Get("/api/catalog", api_route(store, cache, api_catalog));
  server.Get("/api/diff", api_route(store, cache, api_diff));
  server.Get(R"(/api(/.*)?)", [](const httplib::Request& request, httplib::Response& response) {
    send_error(response, 404,
               "no API endpoint " + request.path.substr(0, 100) + " (endpoints: /api/rows, /api/model, /api/training, /api/pairs, "
               "/api/catalog, /api/diff)");
  });
  server.Get(R"(/data/([^/]*))", [&store](const httplib::Request& request, httplib::Response& response) {
    try {
      const std::string name = request.matches[1];
      StaticFile file = dataset_file(*store.current(), name);
      response.set_header("Cache-Control", "no-cache");
      response.set_header("Content-Disposition", "attachment; filename=\"" + name + "\"");
      response.set_content(std::move(file.body), file.content_type);
    } catch (const HttpError& e) {
      send_error(response, e.status(), e.what());
    }
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
  // Whatever httplib refuses itself (bad request line, URI over its limit) or a handler fails
  // with still answers in JSON.
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
    send_error(response, 500, internal_error_message(error));
  });
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    send_error(response, response.status, response.status == 414 ? "request line too long" : "request refused");
    return httplib::Server::HandlerResponse::Handled;
  }));

  ConnectionGate gate(listener->fd(), limits, static_cast<size_t>(options.threads),
                      [&server](const ReceivedRequest& request) {
                        const std::string_view method = request_method(request.bytes);
                        if (!method.empty() && method != "GET" && method != "HEAD") return method_not_allowed(method);
                        return server.answer(request);
                      });

  std::atomic<bool> done = false;
  std::thread housekeeping([&] {
    const timespec interval = to_timespec(options.reload_interval_s);
    while (!done) {
      if (sigtimedwait(&stop_signals, nullptr, &interval) > 0) {
        gate.stop();
        return;
      }
      if (store.refresh()) report_snapshot(store, "reloaded");
    }
  });
  report_snapshot(store, "loaded");
  const std::string shown_host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  on_listening("http://" + shown_host + ":" + std::to_string(listener->port()) + "/");
  try {
    gate.run();
  } catch (...) {
    done = true;
    housekeeping.join();
    throw;
  }
  done = true;
  housekeeping.join();
}

}  // namespace canrun
