#include "openai/model_server.h"

#include <httplib.h>
#include <omp.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "chat/chat_template.h"
#include "openai/api_error.h"
#include "openai/client_connection.h"
#include "openai/completion_request.h"
#include "openai/completion_response.h"
#include "openai/embedding_routes.h"
#include "openai/generation_service.h"
#include "openai/server_metrics.h"
#include "openai/stop_signals.h"
#include "serve/buffered_http_server.h"
#include "serve/connection_gate.h"
#include "serve/descriptor_limit.h"
#include "serve/host_guard.h"
#include "serve/listener.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace canrun {
namespace {

using httplib::Request;
using httplib::Response;

constexpr auto kStreamPoll = std::chrono::milliseconds(250);  // how often a quiet request looks at its client

std::string route_label(const std::string& path) {
  for (const char* route : {"/v1/completions", "/v1/chat/completions", "/v1/embeddings", "/embed", "/similarity",
                            "/rerank", "/tokenize", "/v1/models", "/health", "/metrics"})
    if (path == route) return route;
  if (path.starts_with("/v1/models/")) return "/v1/models/{id}";
  return "other";
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// "models/SmolLM2-135M-Instruct/" -> "SmolLM2-135M-Instruct"
std::string folder_name(const std::string& model_dir) {
  std::filesystem::path folder = std::filesystem::absolute(model_dir).lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();
  return folder.filename().string();
}

class ModelServer {
 public:
  ModelServer(const std::string& model_dir, const SessionOptions& session_options, const ModelServerOptions& options,
              const std::vector<std::string>& allowed_hosts)
      : options_(options),
        allowed_hosts_(allowed_hosts),
        session_(model_dir, session_options),
        tokenizer_(Tokenizer::from_file((std::filesystem::path(model_dir) / "tokenizer.json").string())),
        name_(options.served_model_name.empty() ? folder_name(model_dir) : options.served_model_name),
        created_(static_cast<int64_t>(std::time(nullptr))),
        service_(session_, tokenizer_, metrics_, options.slots, options.max_queue, options.prefill_chunk,
                 options.prompt_lookup, options.threads > 0 ? options.threads : omp_get_max_threads()) {
    session_.check_prompt_lookup(options.prompt_lookup);
    if (session_.encodes()) {
      // A cross-encoder ranks pairs (/rerank); any other encoder embeds texts.
      if (is_sequence_classifier(read_json_file(model_dir + "/config.json", ErrorKind::kCheckpoint)))
        cross_encoder_.emplace(session_);
      else
        sentence_encoder_.emplace(session_);
      encoder_service_.emplace(sentence_encoder_ ? &*sentence_encoder_ : nullptr, options.batch_tokens,
                               options.max_queue, options.threads > 0 ? options.threads : omp_get_max_threads());
      embedding_routes_.emplace(sentence_encoder_ ? &*sentence_encoder_ : nullptr,
                                cross_encoder_ ? &*cross_encoder_ : nullptr, *encoder_service_, name_);
    }
    try {
      chat_.emplace(ChatTemplate::from_model_dir(model_dir, options.chat_template));
    } catch (const Error& e) {
      if (options.chat_template) throw;  // asked for by name: it must be there
      no_chat_reason_ = e.what();
    }
    routes();
  }

  // Serves until stop() has drained the requests in flight.
  void run(const std::function<void(const std::string&)>& on_listening) {
    if (std::optional<Listener> opened = Listener::open(options_.host, options_.port)) listener_.emplace(std::move(*opened));
    if (!listener_)
      fail(ErrorKind::kUsage, "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                                  " (--host, --port): the address is in use or not this machine's");
    host_guard_.emplace(is_loopback_host(listener_->address()), allowed_hosts_);
    GateLimits limits;
    limits.max_connections = static_cast<size_t>(options_.max_connections);
    limits.header_timeout_s = options_.header_timeout_s;
    limits.idle_timeout_s = options_.idle_timeout_s;
    limits.max_body_bytes = static_cast<size_t>(options_.max_body_bytes);
    // A worker holds each request from its arrival to its last token: one per slot and per
    // queued request, and a few more for /health, /metrics, /v1/models and the 429s.
    const size_t workers = static_cast<size_t>(options_.slots + options_.max_queue + 8);
    {
      std::lock_guard lock(gate_mutex_);
      gate_.emplace(listener_->fd(), limits, workers,
                    [this](const ReceivedRequest& request) { return http_.answer(request); }, error_body_text);
      if (draining_) gate_->stop();  // stopped before the gate was there
    }
    std::thread front([this] {
      gate_->run();
      service_.stop();
      if (encoder_service_) encoder_service_->stop();
    });
    const std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
    on_listening("http://" + host + ":" + std::to_string(listener_->port()));
    // On this thread, which loaded the session.
    if (encoder_service_) encoder_service_->run();
    else service_.run();
    front.join();
  }

  // From any thread: refuse new requests (503), let those in flight finish and be sent, then
  // make run() return.
  void stop() {
    std::lock_guard lock(gate_mutex_);
    draining_ = true;
    if (gate_) gate_->stop();
  }

 private:
  void routes() {
    http_.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
    http_.set_keep_alive_max_count(1000);
    // Only the Keep-Alive header's hint (whole seconds); the gate enforces the idle timeout itself.
    http_.set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, options_.idle_timeout_s)));
    http_.set_pre_routing_handler([this](const Request& request, Response& response) {
      if (const std::optional<HttpError> error = host_guard_->refusal(request)) {
        reply_error(response, ApiError(error->status(), error->what()));
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http_.set_logger([this](const Request& request, const Response& response) {
      metrics_.request_done(route_label(request.path), response.status);
    });
    http_.set_error_handler([this](const Request& request, Response& response) {
      if (!response.body.empty()) return;
      std::string message = "HTTP " + std::to_string(response.status);
      if (response.status == 400) message = "the request is malformed";
      if (response.status == 404) message = "no route " + request.method + " " + request.path;
      if (response.status == 408) message = "the request did not arrive in time";
      if (response.status == 413)
        message = "the request body is larger than " + std::to_string(options_.max_body_bytes) + " bytes";
      if (response.status == 414) message = "the request line is too long";
      response.set_content(json_text(error_body(response.status, message)), "application/json");
    });
    http_.set_exception_handler([](const Request&, Response& response, std::exception_ptr error) {
      response.status = 500;
      response.set_content(json_text(error_body(500, internal_error_message(error))), "application/json");
    });
    http_.Get("/health", [this](const Request&, Response& response) {
      if (draining_) return reply_error(response, ApiError(503, "the server is shutting down"));
      response.set_content("{\"status\":\"ok\"}", "application/json");
    });
    http_.Get("/v1/models", [this](const Request&, Response& response) {
      response.set_content(json_text({{"object", "list"}, {"data", Json::array({model_card()})}}), "application/json");
    });
    http_.Get("/v1/models/(.+)", [this](const Request& request, Response& response) {
      const std::string id = request.matches[1];
      if (id != name_) return reply_error(response, unknown_model(id));
      response.set_content(json_text(model_card()), "application/json");
    });
    http_.Get("/metrics", [this](const Request&, Response& response) {
      response.set_content(metrics_.text(service_.queued(), service_.running()), "text/plain; version=0.0.4");
    });
    for (const bool chat : {false, true})
      http_.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                 [this, chat](const Request& request, Response& response) {
                   try {
                     complete(request, response, chat);
                   } catch (const ApiError& e) {
                     reply_error(response, e);
                   }
                 });
    embedding_route("/v1/embeddings", &EmbeddingRoutes::openai_embeddings);
    embedding_route("/embed", &EmbeddingRoutes::tei_embed);
    embedding_route("/similarity", &EmbeddingRoutes::similarity);
    embedding_route("/rerank", &EmbeddingRoutes::rerank);
    http_.Post("/tokenize", [this](const Request& request, Response& response) {
      try {
        response.set_content(json_text(EmbeddingRoutes::tokenize(tokenizer_, request.body)), "application/json");
      } catch (const ApiError& e) {
        reply_error(response, e);
      }
    });
  }

  // A route an encoder answers; a model that generates text answers it with a 400 naming it.
  void embedding_route(const char* route, Json (EmbeddingRoutes::*answer)(const std::string&, ServerClock::time_point)) {
    http_.Post(route, [this, route, answer](const Request& request, Response& response) {
      try {
        if (draining_) throw ApiError(503, "the server is shutting down");
        if (!embedding_routes_) throw wrong_kind(route);
        response.set_content(json_text(((*embedding_routes_).*answer)(request.body, deadline_from(ServerClock::now()))),
                             "application/json");
      } catch (const ApiError& e) {
        reply_error(response, e);
      }
    });
  }

  // A generation route on an encoder, or an embedding route on a model that generates text.
  ApiError wrong_kind(const std::string& route) const {
    if (session_.encodes())
      return ApiError(400, route + " generates text; " + name_ + " is an encoder (" + session_.spec().model_type +
                               "): use " + (cross_encoder_ ? "/rerank" : "/v1/embeddings, /embed or /similarity"));
    return ApiError(400, route + " needs an encoder; " + name_ + " is a " + session_.spec().model_type +
                             " model that generates text: use /v1/completions or /v1/chat/completions");
  }

  ServerClock::time_point deadline_from(ServerClock::time_point arrival) const {
    return arrival + std::chrono::duration_cast<ServerClock::duration>(
                         std::chrono::duration<double>(options_.request_timeout_s));
  }

  Json model_card() const {
    return {{"id", name_}, {"object", "model"}, {"created", created_}, {"owned_by", "canrun"},
            {"max_model_len", session_.spec().max_positions}};
  }

  ApiError unknown_model(const std::string& id) const {
    return ApiError(404, "The model `" + id + "` does not exist (this server serves `" + name_ + "`)", "model",
                    "model_not_found");
  }

  static void reply_error(Response& response, const ApiError& error) {
    response.status = error.status();
    response.set_content(json_text(error.body()), "application/json");
  }

  std::vector<int32_t> prompt_ids(const CompletionRequest& request) const {
    const char* param = request.chat ? "messages" : "prompt";
    std::vector<int32_t> ids;
    if (request.chat) {
      if (!chat_) throw ApiError(400, "this model has no chat template (" + no_chat_reason_ + "): use /v1/completions",
                                 "messages");
      try {
        // A rendered chat carries its special tokens already, as apply_chat_template encodes it.
        ids = tokenizer_.encode(chat_->render(request.conversation), /*add_special_tokens=*/false).ids;
      } catch (const Error& e) {
        throw ApiError(400, std::string("messages: the chat template cannot render them: ") + e.what(), "messages");
      }
    } else if (request.prompt_ids) {
      ids = *request.prompt_ids;
      for (const int32_t id : ids)
        if (id >= session_.spec().vocab_size)
          throw ApiError(400, "prompt: token id " + std::to_string(id) + " is outside the vocabulary of " +
                                  std::to_string(session_.spec().vocab_size), param);
    } else {
      ids = tokenizer_.encode(request.prompt).ids;
    }
    if (ids.empty()) throw ApiError(400, std::string(param) + ": has no tokens", param);
    return ids;
  }

  void complete(const Request& http_request, Response& response, bool chat) {
    const ServerClock::time_point arrival = ServerClock::now();
    if (draining_) throw ApiError(503, "the server is shutting down");
    if (session_.encodes()) throw wrong_kind(chat ? "/v1/chat/completions" : "/v1/completions");
    const CompletionRequest request = parse_completion_request(http_request.body, chat);
    if (!request.model.empty() && request.model != name_) throw unknown_model(request.model);
    GenerationJob job;
    job.arrival = arrival;
    job.prompt = prompt_ids(request);
    const int64_t context = session_.spec().max_positions;
    const int64_t prompt_tokens = static_cast<int64_t>(job.prompt.size());
    const int64_t room = context - prompt_tokens;
    if (room < 1)
      throw ApiError(400, std::string(chat ? "messages" : "prompt") + ": " + std::to_string(prompt_tokens) +
                              " tokens leave no room in the model's context of " + std::to_string(context) +
                              " positions", chat ? "messages" : "prompt");
    job.max_tokens = request.max_tokens.value_or(chat ? room : std::min<int64_t>(16, room));
    if (job.max_tokens > room)
      throw ApiError(400, "max_tokens: a prompt of " + std::to_string(prompt_tokens) + " tokens plus max_tokens " +
                              std::to_string(job.max_tokens) + " exceeds the model's context of " +
                              std::to_string(context) + " positions", "max_tokens");
    job.sampling = request.sampling;
    job.stop = request.stop;
    job.ignore_eos = request.ignore_eos;
    const std::shared_ptr<Job> running = service_.submit(std::move(job));
    if (!running) {
      response.set_header("Retry-After", "1");
      throw ApiError(429, "the server is busy: all " + std::to_string(options_.slots) + " slots generate and " +
                              std::to_string(options_.max_queue) + " requests wait (--slots, --max-queue); retry later");
    }
    const ResponseIdentity identity{(chat ? "chatcmpl-" : "cmpl-") + std::to_string(++responses_),
                                    static_cast<int64_t>(std::time(nullptr)), name_, chat};
    const ServerClock::time_point deadline = deadline_from(arrival);
    if (request.stream) stream(response, running, identity, request.include_usage, deadline);
    else respond_whole(http_request, response, *running, identity, deadline);
  }

  ApiError timeout_error() const {
    return ApiError(504, "the request took longer than " + seconds_text(options_.request_timeout_s) +
                             " s (--request-timeout)");
  }

  void respond_whole(const Request& http_request, Response& response, Job& job, const ResponseIdentity& identity,
                     ServerClock::time_point deadline) {
    // Nothing is written before the end, so the client's leaving shows only on its socket.
    const std::optional<ClientConnection> client = ClientConnection::find(
        http_request.local_addr, http_request.local_port, http_request.remote_addr, http_request.remote_port);
    std::string text;
    JobOutput out;
    for (;;) {
      out = job.wait(std::min(deadline, ServerClock::now() + kStreamPoll));
      text += out.text;
      if (out.finished) break;
      if (client && client->closed()) {
        job.cancel();  // the generation stops after its next token; nobody reads the answer
        return;
      }
      if (ServerClock::now() >= deadline) {
        job.cancel();
        throw timeout_error();
      }
    }
    if (out.error_status) throw ApiError(out.error_status, out.error);
    response.set_content(
        json_text(whole_response(identity, text, out.finish_reason, out.prompt_tokens, out.completion_tokens)),
        "application/json");
  }

  void stream(Response& response, const std::shared_ptr<Job>& job, const ResponseIdentity& identity,
              bool include_usage, ServerClock::time_point deadline) {
    response.set_header("Cache-Control", "no-cache");
    auto started = std::make_shared<bool>(false);
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, job, identity, include_usage, deadline, started](size_t, httplib::DataSink& sink) {
          // Hands the last call's events to the gate, and finds a client that left: the
          // provider's release then cancels the job.
          if (!sink.is_writable()) return false;
          const auto send = [&](const std::string& event) { return sink.write(event.data(), event.size()); };
          const auto end = [&](const std::string& last) {
            send(last + kSseDone);
            sink.done();
            return true;
          };
          if (!*started) {
            *started = true;
            if (identity.chat && !send(sse_event(role_chunk(identity)))) return false;
          }
          const JobOutput out = job->wait(std::min(deadline, ServerClock::now() + kStreamPoll));
          // A failed write is a client gone: the provider's release cancels the job.
          if (!out.text.empty() && !send(sse_event(text_chunk(identity, out.text)))) return false;
          if (out.finished) {
            if (out.error_status) return end(sse_event(ApiError(out.error_status, out.error).body()));
            std::string last = sse_event(text_chunk(identity, "", out.finish_reason));
            if (include_usage) last += sse_event(usage_chunk(identity, out.prompt_tokens, out.completion_tokens));
            return end(last);
          }
          if (ServerClock::now() >= deadline) {
            job->cancel();
            return end(sse_event(timeout_error().body()));
          }
          return true;
        },
        [job](bool success) {
          if (!success) job->cancel();
        });
  }

  ModelServerOptions options_;
  std::vector<std::string> allowed_hosts_;
  std::optional<HostGuard> host_guard_;  // once the listening address is known
  Session session_;
  Tokenizer tokenizer_;
  std::optional<ChatTemplate> chat_;
  std::string no_chat_reason_;
  std::string name_;
  int64_t created_;
  ServerMetrics metrics_;
  GenerationService service_;
  // An encoder's: its pipeline (sentence-transformers' or a cross-encoder's), the queue of its
  // requests, and the routes that answer them.
  std::optional<SentenceEncoder> sentence_encoder_;
  std::optional<CrossEncoder> cross_encoder_;
  std::optional<EncoderService> encoder_service_;
  std::optional<EmbeddingRoutes> embedding_routes_;
  BufferedHttpServer http_;
  std::optional<Listener> listener_;
  std::mutex gate_mutex_;
  std::optional<ConnectionGate> gate_;  // serves on listener_
  std::atomic<bool> draining_ = false;
  std::atomic<uint64_t> responses_ = 0;
};

}  // namespace

void serve_model(const std::string& model_dir, const SessionOptions& session_options,
                 const ModelServerOptions& options, const std::function<void(const std::string& url)>& on_listening) {
  std::optional<ModelServer> server;  // outlives the signal watcher, which may stop it
  // Before any thread starts, so that every thread inherits the blocked mask.
  StopSignals signals;
  // Mistakes in the options are told before the model loads.
  const std::vector<std::string> allowed_hosts = checked_allowed_hosts(options.allowed_hosts);
  require_descriptors_for(static_cast<size_t>(options.max_connections));
  server.emplace(model_dir, session_options, options, allowed_hosts);
  signals.on_stop([&server] { server->stop(); });
  server->run(on_listening);
}

}  // namespace canrun
