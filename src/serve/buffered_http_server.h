// httplib's request handling (routes, pre-routing, error and exception handlers, default
// headers) run over a request the connection gate has already received whole, with the answer
// collected in memory for the gate to send: a worker never touches the network. An answer with
// a chunked content provider (a stream of events) goes to the gate piece by piece: what the
// provider wrote is handed over each time it asks DataSink::is_writable(), which also says
// whether the client is still there.
#pragma once

#include <httplib.h>

#include "serve/connection_gate.h"

namespace canrun {

class BufferedHttpServer : public httplib::Server {
 public:
  BufferedHttpServer();

  // Keeps the connection open after the answer unless the request closes it, httplib could not
  // parse its head, the connection reached the keep-alive request limit, or the request's
  // framing was not certain. httplib
  // reads no body of a GET or HEAD; the gate has already cut it from the next request.
  GateReply answer(const ReceivedRequest& request);
};

}  // namespace canrun
