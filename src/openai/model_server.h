// canrun serve MODEL_DIR: the engine behind an OpenAI-compatible HTTP API: /v1/completions and
// /v1/chat/completions (whole or streamed as server-sent events), /v1/models, /health and
// /metrics. Requests wait in a bounded queue (429 with Retry-After past it) for a sequence slot;
// the running sequences decode together; a client that disconnects frees its slot at the next
// token; SIGTERM or SIGINT stops taking requests, lets the ones in flight finish and then exits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "runtime/session.h"

namespace canrun {

struct ModelServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: a free one
  std::string served_model_name;  // default: the model folder's name
  std::optional<std::string> chat_template;  // a named template of the folder
  int slots = 1;                  // sequences decoded together
  int64_t prefill_chunk = 256;    // with slots > 1: a prompt's tokens per step between the others' (0: at once)
  int64_t max_queue = 16;         // requests waiting for a slot
  int threads = 0;                // 0: every core
  double request_timeout_s = 600;  // from arrival to the last token
  double idle_timeout_s = 5;       // a keep-alive connection's wait for its next request
  int64_t max_body_bytes = 4 << 20;
};

// Loads the model, then serves until SIGTERM or SIGINT; `on_listening(url)` once it accepts
// connections. Throws Error when the model does not load or the address cannot be bound.
void serve_model(const std::string& model_dir, const SessionOptions& session_options,
                 const ModelServerOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace canrun
