// canrun serve MODEL_DIR: the engine behind an OpenAI-compatible HTTP API: /v1/completions and
// /v1/chat/completions (whole or streamed as server-sent events), or for an encoder
// /v1/embeddings and text-embeddings-inference's /embed and /similarity (requests batched by a
// token budget); /tokenize, /v1/models[/ID], /health and /metrics. The connection gate the Space uses fronts it (each request read whole before a worker
// sees it, deadlines, a connection cap, 413 on an announced oversize body), and so does its Host
// check against DNS rebinding. Requests wait in a bounded queue (429 with Retry-After past it) for
// a sequence slot; the running sequences decode together; a client that disconnects frees its
// slot at the next token; SIGTERM or SIGINT stops taking requests, lets the ones in flight finish
// and then exits, and while the model still loads ends the process at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace canrun {

struct ModelServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: a free one
  std::string served_model_name;  // the model's id in the API; empty: the model folder's name
  std::optional<std::string> chat_template;  // a named template of the folder
  int slots = 1;                  // sequences decoded together
  int64_t prefill_chunk = 256;    // with slots > 1: a prompt's tokens per step between the others' (0: at once)
  PromptLookup prompt_lookup;     // speculative decoding of a sequence decoding alone (off by default)
  int64_t max_queue = 16;         // requests waiting for a slot (an encoder's: for a batch)
  int64_t batch_tokens = 8192;    // an encoder's: tokens per batch of requests
  int threads = 0;                // 0: every core
  double request_timeout_s = 600;  // from arrival to the last token
  double idle_timeout_s = 5;       // a keep-alive connection's wait for its next request
  double header_timeout_s = 10;    // for a whole request (line, headers, body) to arrive
  int max_connections = 1024;      // open at once; past it a new connection gets 503
  std::vector<std::string> allowed_hosts;  // Host names answered besides loopback ones (--allow-host)
  int64_t max_body_bytes = 4 << 20;
};

// Loads the model, then serves until SIGTERM or SIGINT; `on_listening(url)` once it accepts
// connections. Throws Error when the model does not load, the address cannot be bound, an
// --allow-host value is malformed or the process may not open enough descriptors for
// max_connections.
void serve_model(const std::string& model_dir, const SessionOptions& session_options,
                 const ModelServerOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace canrun
