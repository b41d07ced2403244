#include "openai/model_server.h"

#include <httplib.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <thread>

#include "chat/chat_template.h"
#include "openai/api_error.h"
#include "openai/client_connection.h"
#include "openai/completion_request.h"
#include "openai/completion_response.h"
#include "openai/generation_service.h"
#include "openai/server_metrics.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace canrun {
namespace {

using httplib::Request;
using httplib::Response;

constexpr auto kStreamPoll = std::chrono::milliseconds(250);  // how often a quiet request looks at its client

std::string route_label(const std::string& path) {
  for (const char* route : {"/v1/completions", "/v1/chat/completions", "/v1/models", "/health", "/metrics"})
    if (path == route) return route;
  return "other";
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

class ModelServer {
 public:
  ModelServer(const std::string& model_dir, const SessionOptions& session_options, const ModelServerOptions& options)
      : options_(options),
        session_(model_dir, session_options),
        tokenizer_(Tokenizer::from_file((std::filesystem::path(model_dir) / "tokenizer.json").string())),
        name_(options.served_model_name.empty() ? std::filesystem::path(model_dir).lexically_normal().filename().string()
                                                : options.served_model_name),
        created_(static_cast<int64_t>(std::time(nullptr))),
        service_(session_, tokenizer_, metrics_, options.slots, options.max_queue, options.prefill_chunk,
                 options.threads > 0 ? options.threads : omp_get_max_threads()) {
    if (name_.empty()) name_ = model_dir;
    try {
      chat_.emplace(ChatTemplate::from_model_dir(model_dir, options.chat_template));
    } catch (const Error& e) {
      if (options.chat_template) throw;  // asked for by name: it must be there
      no_chat_reason_ = e.what();
    }
    routes();
  }

  void run(const sigset_t& signals, const std::function<void(const std::string&)>& on_listening) {
    const int port = options_.port == 0 ? http_.bind_to_any_port(options_.host)
                                        : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0)
      fail(ErrorKind::kUsage, "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                                  " (--host, --port): the address is in use or not this machine's");
    std::atomic<bool> stopped = false;
    std::thread watcher([&] { watch_signals(signals, stopped); });
    std::thread listener([&] {
      http_.listen_after_bind();
      service_.stop();
    });
    const std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
    on_listening("http://" + host + ":" + std::to_string(port));
    service_.run();  // on this thread, which loaded the session
    listener.join();
    stopped = true;
    watcher.join();
  }

 private:
  // On SIGTERM or SIGINT: refuse new requests (503), let those in flight finish, then stop.
  void watch_signals(const sigset_t& signals, const std::atomic<bool>& stopped) {
    const timespec tick{0, 100'000'000};
    while (!stopped) {
      if (sigtimedwait(&signals, nullptr, &tick) < 0) continue;
      draining_ = true;
      while (in_flight_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      http_.stop();
      return;
    }
  }

  void routes() {
    http_.new_task_queue = [threads = static_cast<size_t>(options_.slots + options_.max_queue + 8)] {
      return new httplib::ThreadPool(threads);
    };
    http_.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
    http_.set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, options_.idle_timeout_s)));
    http_.set_read_timeout(30);
    http_.set_write_timeout(30);
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
      const Json model = {{"id", name_}, {"object", "model"}, {"created", created_}, {"owned_by", "canrun"},
                          {"max_model_len", session_.spec().max_positions}};
      response.set_content(json_text({{"object", "list"}, {"data", Json::array({model})}}), "application/json");
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
    ++in_flight_;
    // Held until the response is written (a stream's last chunk): draining waits for it.
    const std::shared_ptr<void> in_flight(nullptr, [this](void*) { --in_flight_; });
    if (draining_) throw ApiError(503, "the server is shutting down");
    const CompletionRequest request = parse_completion_request(http_request.body, chat);
    if (!request.model.empty() && request.model != name_)
      throw ApiError(404, "The model `" + request.model + "` does not exist (this server serves `" + name_ + "`)",
                     "model", "model_not_found");
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
    const ServerClock::time_point deadline =
        arrival + std::chrono::duration_cast<ServerClock::duration>(std::chrono::duration<double>(options_.request_timeout_s));
    if (request.stream) stream(response, running, identity, request.include_usage, deadline, in_flight);
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
              bool include_usage, ServerClock::time_point deadline, const std::shared_ptr<void>& in_flight) {
    response.set_header("Cache-Control", "no-cache");
    auto started = std::make_shared<bool>(false);
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, job, identity, include_usage, deadline, started, in_flight](size_t, httplib::DataSink& sink) {
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
  Session session_;
  Tokenizer tokenizer_;
  std::optional<ChatTemplate> chat_;
  std::string no_chat_reason_;
  std::string name_;
  int64_t created_;
  ServerMetrics metrics_;
  GenerationService service_;
  httplib::Server http_;
  std::atomic<bool> draining_ = false;
  std::atomic<int64_t> in_flight_ = 0;
  std::atomic<uint64_t> responses_ = 0;
};

}  // namespace

void serve_model(const std::string& model_dir, const SessionOptions& session_options,
                 const ModelServerOptions& options, const std::function<void(const std::string& url)>& on_listening) {
  // Blocked before any thread starts, so that every thread inherits the mask and only the
  // watcher takes them.
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  try {
    ModelServer server(model_dir, session_options, options);
    server.run(signals, on_listening);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace canrun
