// The front of both servers (the Space and the model server): one thread that accepts
// connections and reads each request whole (head and body) before a worker sees it, then writes
// the worker's answer back, all without blocking. A
// slow, idle or surplus connection costs this thread a few bytes of bookkeeping and never holds
// a worker, so it cannot delay anyone else's request:
//  - a request must arrive whole within `header_timeout_s` of its first byte (of the
//    connection's opening, for its first request); one cut short gets 408 and the connection
//    closes, a connection that never sent a byte closes silently;
//  - a keep-alive connection may wait `idle_timeout_s` between requests;
//  - past `max_connections` open connections, a new one gets 503 and closes at once;
//  - an answer must be taken by the client within kSendTimeout;
//  - a request whose head announces a body over `max_body_bytes` goes to a worker with the head
//    alone (its answer is a 413), and the connection closes after the answer.
// A worker may send part of its answer while it makes the rest (a stream of server-sent
// events): what it writes to the request's ReplyChannel goes out as it comes, in order.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "serve/refusal_reply.h"

namespace canrun {

struct GateLimits {
  size_t max_connections = 1024;
  double header_timeout_s = 10;
  double idle_timeout_s = 5;
  size_t max_head_bytes = 32 * 1024;
  size_t max_body_bytes = 64 * 1024;
};

// Where a worker writes the part of its answer it has made so far; the gate sends it without
// waiting for the rest. Any thread may write; writes are sent in their order, before the bytes
// the worker returns at its end.
class ReplyChannel {
 public:
  virtual ~ReplyChannel() = default;
  // False, writing nothing, once the client is gone: it closed its end, a send failed, or it
  // left earlier bytes untaken for kSendTimeout. A worker that gets false should stop.
  virtual bool write(std::string bytes) = 0;
  // The client is gone, as write() would find; reads nothing of the connection.
  virtual bool closed() const = 0;
};

// One whole request as it arrived, handed to a worker.
struct ReceivedRequest {
  std::string bytes;  // the head and its Content-Length body, nothing of a next request
  bool reusable;      // the connection can carry a next request (RequestFraming::reusable)
  int earlier_requests;  // answered before on the same connection
  int fd;  // still open while the worker has the request; the worker must not read or write it
  std::string remote_ip;
  int remote_port;
  std::string local_ip;
  int local_port;
  ReplyChannel* channel = nullptr;  // the gate's; null where there is no gate (tests)
};

struct GateReply {
  std::string bytes;  // the whole HTTP response
  bool keep_alive;    // wait for a next request on the connection after sending it
};

class ConnectionGate {
 public:
  using Answer = std::function<GateReply(const ReceivedRequest&)>;

  // `answer` runs on `worker_threads` threads. `listen_fd` must be a non-blocking listening
  // socket; it stays the caller's. The gate's own refusals (408, 431, 503) carry `error_body`.
  ConnectionGate(int listen_fd, const GateLimits& limits, size_t worker_threads, Answer answer,
                 ErrorBody error_body = json_error_body);
  ~ConnectionGate();

  // Serves until stop(), then drains: stops accepting, closes the connections that wait for a
  // request, lets the workers finish and sends their answers (Connection: close in effect),
  // and returns once no connection is left.
  void run();
  // From any thread; before run() too, which then returns at once.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace canrun
