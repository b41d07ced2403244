#include "serve/connection_gate.h"

#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serve/refusal_reply.h"
#include "serve/request_framing.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

// A client gets this long to take an answer, or the next part of a streamed one; the gate holds
// its bytes meanwhile.
constexpr auto kSendTimeout = std::chrono::seconds(10);
// After the gate's last byte and FIN it reads and drops what the client still sends for this
// long: closing with unread bytes would reset the connection, and the client could lose the
// answer before reading it.
constexpr auto kLingerTimeout = std::chrono::seconds(1);
// Deadlines are checked this often (and so are met to within this much).
constexpr auto kSweepInterval = std::chrono::milliseconds(50);
// Connections accepted per wake-up, so that a burst does not starve the open ones.
constexpr int kAcceptBatch = 256;
constexpr size_t kReadChunk = 16 * 1024;

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

void numeric_address(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  char host[NI_MAXHOST] = "";
  char service[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

std::string shown_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", s);
  return text;
}

enum class Phase {
  kReading,    // waiting for (the rest of) a request
  kAnswering,  // a worker has the request; the gate reads nothing, and sends what it streams
  kSending,    // writing the answer
  kLingering,  // answer sent and FIN too; dropping what still arrives until the client closes
};

// A worker's ReplyChannel: what it writes joins the gate's queue of completions, in order.
class StreamChannel final : public ReplyChannel {
 public:
  StreamChannel(int fd, std::function<void(std::string)> deliver) : fd_(fd), deliver_(std::move(deliver)) {}

  bool write(std::string bytes) override {
    if (closed()) return false;
    deliver_(std::move(bytes));
    return true;
  }

  bool closed() const override {
    if (given_up_) return true;
    // The gate reads nothing while a worker answers, so a peek sees only what the client did.
    char byte;
    const ssize_t peeked = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (peeked == 0) return true;  // the client's end of stream
    return peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }

  // The gate's event loop found the client gone; the worker's writes fail from now on.
  void give_up() { given_up_ = true; }
  bool given_up() const { return given_up_; }

 private:
  const int fd_;  // open until the worker is done: the gate closes no connection a worker answers
  const std::function<void(std::string)> deliver_;
  std::atomic<bool> given_up_ = false;
};

struct Connection {
  int fd = -1;
  bool admitted = true;  // false: refused over the limit, only its 503 is sent
  Phase phase = Phase::kReading;
  uint32_t watched = 0;  // the epoll events registered; 0: not registered
  Clock::time_point deadline;
  std::string received;         // not yet handed to a worker
  bool request_started = false;  // a byte of the request now being read has arrived
  int answered = 0;
  std::string reply;  // kSending: the answer; kAnswering: what the worker streamed and is not yet sent
  size_t reply_sent = 0;
  bool keep_alive = false;  // after `reply`
  std::shared_ptr<StreamChannel> channel;  // while a worker answers
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

// A part of an answer a worker streamed, or the end of its answer.
struct Completion {
  int fd;
  std::string bytes;
  bool finished;    // the worker is done with the request
  bool keep_alive;  // when finished
};

enum class SendResult { kDone, kBlocked, kFailed };

}  // namespace

struct ConnectionGate::Impl {
  Impl(int listen_fd, const GateLimits& limits, size_t worker_threads, Answer answer, ErrorBody error_body)
      : listen_fd(listen_fd), limits(limits), answer(std::move(answer)), error_body(error_body) {
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd < 0 || wake_fd < 0) throw std::system_error(errno, std::generic_category(), "connection gate");
    add_to_epoll(listen_fd, EPOLLIN);
    add_to_epoll(wake_fd, EPOLLIN);
    workers = std::make_unique<httplib::ThreadPool>(worker_threads);
  }

  ~Impl() {
    stop_workers();
    for (auto& [fd, connection] : connections) close(fd);
    close(wake_fd);
    close(epoll_fd);
  }

  void run();
  void stop() {
    stopping = true;
    wake();
  }

  // From any thread.
  void complete(Completion completion) {
    {
      std::lock_guard lock(completions_mutex);
      completions.push_back(std::move(completion));
    }
    wake();
  }

 private:
  void add_to_epoll(int fd, uint32_t events) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
  }

  void watch(Connection& connection, uint32_t events) {
    if (events == connection.watched) return;
    epoll_event event{};
    event.events = events;
    event.data.fd = connection.fd;
    const int operation = connection.watched == 0 ? EPOLL_CTL_ADD : events == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    epoll_ctl(epoll_fd, operation, connection.fd, &event);
    connection.watched = events;
  }

  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(wake_fd, &one, sizeof(one));
  }

  void stop_workers() {
    if (workers) workers->shutdown();
    workers.reset();
  }

  static bool counts_as_open(const Connection& connection) {
    return connection.admitted && connection.phase != Phase::kLingering;
  }

  void set_phase(Connection& connection, Phase phase) {
    (counts_as_open(connection) ? open_count : closing_count)--;
    connection.phase = phase;
    (counts_as_open(connection) ? open_count : closing_count)++;
  }

  Connection& add_connection(int fd, bool admitted) {
    Connection& connection = connections[fd];
    connection.fd = fd;
    connection.admitted = admitted;
    (counts_as_open(connection) ? open_count : closing_count)++;
    return connection;
  }

  void close_connection(Connection& connection) {
    (counts_as_open(connection) ? open_count : closing_count)--;
    const int fd = connection.fd;
    close(fd);  // also leaves the epoll set
    connections.erase(fd);
  }

  void accept_connections(Clock::time_point now);
  void read_request(Connection& connection, Clock::time_point now);
  void dispatch_if_complete(Connection& connection, Clock::time_point now);
  void send_reply(Connection& connection, std::string reply, bool keep_alive, Clock::time_point now);
  SendResult send_pending(Connection& connection);
  void flush(Connection& connection, Clock::time_point now);
  void stream_out(Connection& connection, std::string bytes, Clock::time_point now);
  void flush_stream(Connection& connection, Clock::time_point now);
  void give_up_stream(Connection& connection);
  void begin_draining();
  void linger(Connection& connection, Clock::time_point now);
  void drop_input(Connection& connection);
  void take_completions(Clock::time_point now);
  void sweep(Clock::time_point now);

  const int listen_fd;
  const GateLimits limits;
  const Answer answer;
  const ErrorBody error_body;
  std::unique_ptr<httplib::ThreadPool> workers;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping = false;

  std::unordered_map<int, Connection> connections;
  size_t open_count = 0;     // admitted and not yet lingering: what max_connections bounds
  size_t closing_count = 0;  // refused or lingering; bounded by max_connections too
  bool accepting = true;     // false after the process ran out of descriptors, until the next sweep
  bool draining = false;     // stop() was seen: no new connections or requests, answers go out

  std::mutex completions_mutex;
  std::vector<Completion> completions;
};

void ConnectionGate::Impl::run() {
  std::vector<epoll_event> events(256);
  Clock::time_point last_sweep = Clock::now();
  while (!stopping || !connections.empty()) {
    if (stopping && !draining) begin_draining();
    const bool needs_sweeps = !connections.empty() || !accepting;
    const int timeout_ms = needs_sweeps ? static_cast<int>(kSweepInterval.count()) : -1;
    const int ready = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "epoll_wait");
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < std::max(ready, 0); ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd) {
        if (!draining) accept_connections(now);
      } else if (fd == wake_fd) {
        uint64_t count;
        [[maybe_unused]] const ssize_t got = read(wake_fd, &count, sizeof(count));
        take_completions(now);
      } else if (auto found = connections.find(fd); found != connections.end()) {
        Connection& connection = found->second;
        switch (connection.phase) {
          case Phase::kReading: read_request(connection, now); break;
          case Phase::kSending: flush(connection, now); break;
          case Phase::kLingering: drop_input(connection); break;
          case Phase::kAnswering: flush_stream(connection, now); break;
        }
      }
    }
    if (now - last_sweep >= kSweepInterval) {
      sweep(now);
      last_sweep = now;
    }
  }
  stop_workers();
}

void ConnectionGate::Impl::begin_draining() {
  draining = true;
  if (accepting) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
  accepting = false;
  // A connection waiting for a request (or for the rest of one) gets none answered any more.
  std::vector<int> waiting;
  for (const auto& [fd, connection] : connections)
    if (connection.phase == Phase::kReading) waiting.push_back(fd);
  for (const int fd : waiting) close_connection(connections.at(fd));
}

void ConnectionGate::Impl::accept_connections(Clock::time_point now) {
  for (int i = 0; i < kAcceptBatch && accepting; ++i) {
    sockaddr_storage remote{};
    socklen_t remote_length = sizeof(remote);
    const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&remote), &remote_length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Waiting connections stay in the backlog; listening again now would only spin.
        accepting = false;
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
      }
      return;
    }
    if (open_count >= limits.max_connections) {
      const std::string refusal =
          refusal_reply(503, "too many connections (" + std::to_string(limits.max_connections) +
                                 " open, the limit of --max-connections); try again in a moment",
                        {{"Retry-After", "1"}}, error_body);
      if (closing_count >= limits.max_connections) {
        // Too many already on their way out: the refusal goes without waiting for the client.
        [[maybe_unused]] const ssize_t sent = send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL);
        close(fd);
        continue;
      }
      send_reply(add_connection(fd, false), refusal, false, now);
      continue;
    }
    const int yes = 1;
    // Head and body of an answer may go out in separate writes; Nagle's algorithm would hold the
    // second until the client's delayed ACK (40 ms on Linux).
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    Connection& connection = add_connection(fd, true);
    numeric_address(remote, remote_length, connection.remote_ip, connection.remote_port);
    sockaddr_storage local{};
    socklen_t local_length = sizeof(local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0)
      numeric_address(local, local_length, connection.local_ip, connection.local_port);
    connection.deadline = now + seconds(limits.header_timeout_s);
    watch(connection, EPOLLIN);
  }
}

void ConnectionGate::Impl::read_request(Connection& connection, Clock::time_point now) {
  const size_t most = limits.max_head_bytes + limits.max_body_bytes;
  char chunk[kReadChunk];
  while (connection.received.size() < most) {
    const ssize_t got = recv(connection.fd, chunk, std::min(sizeof(chunk), most - connection.received.size()), 0);
    if (got > 0) {
      if (!connection.request_started) {
        connection.request_started = true;
        // A first request's time counts from the connection's opening; a later one's from its
        // first byte, the idle wait before it having its own limit.
        if (connection.answered > 0) connection.deadline = now + seconds(limits.header_timeout_s);
      }
      connection.received.append(chunk, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_connection(connection);  // the client closed, or the connection failed
    return;
  }
  dispatch_if_complete(connection, now);
}

void ConnectionGate::Impl::dispatch_if_complete(Connection& connection, Clock::time_point now) {
  const RequestFraming framing = frame_request(connection.received, limits.max_head_bytes, limits.max_body_bytes);
  if (framing.status == RequestFraming::Status::kHeadTooLarge) {
    send_reply(connection,
               refusal_reply(431, "request line and headers longer than " +
                                      std::to_string(limits.max_head_bytes) + " bytes",
                             {}, error_body),
               false, now);
    return;
  }
  if (framing.status == RequestFraming::Status::kIncomplete) return;

  ReceivedRequest request{connection.received.substr(0, framing.length),
                          framing.reusable,
                          connection.answered,
                          connection.fd,
                          connection.remote_ip,
                          connection.remote_port,
                          connection.local_ip,
                          connection.local_port};
  connection.received.erase(0, framing.length);
  watch(connection, 0);
  set_phase(connection, Phase::kAnswering);
  const int fd = connection.fd;
  connection.channel =
      std::make_shared<StreamChannel>(fd, [this, fd](std::string bytes) { complete({fd, std::move(bytes), false, false}); });
  connection.reply.clear();
  connection.reply_sent = 0;
  request.channel = connection.channel.get();
  workers->enqueue([this, request = std::move(request), channel = connection.channel] {
    GateReply reply{"", false};
    try {
      reply = answer(request);
    } catch (const std::exception&) {
      // Nothing can be said on this connection any more: it closes without (the rest of) an answer.
      channel->give_up();
    }
    complete({request.fd, std::move(reply.bytes), true, reply.keep_alive});
  });
}

void ConnectionGate::Impl::take_completions(Clock::time_point now) {
  std::vector<Completion> taken;
  {
    std::lock_guard lock(completions_mutex);
    taken.swap(completions);
  }
  for (Completion& completion : taken) {
    // The connection is still there: the gate never closes one that a worker answers.
    Connection& connection = connections.at(completion.fd);
    if (!completion.finished) {
      stream_out(connection, std::move(completion.bytes), now);
      continue;
    }
    ++connection.answered;
    const bool given_up = connection.channel->given_up();
    connection.channel.reset();
    if (given_up) {
      close_connection(connection);
      continue;
    }
    // What the worker streamed and the client has not taken yet goes first.
    std::string rest = connection.reply.substr(connection.reply_sent) + completion.bytes;
    send_reply(connection, std::move(rest), completion.keep_alive, now);
  }
}

void ConnectionGate::Impl::stream_out(Connection& connection, std::string bytes, Clock::time_point now) {
  if (connection.channel->given_up()) return;
  if (connection.reply_sent == connection.reply.size()) {
    connection.reply.clear();
    connection.reply_sent = 0;
    connection.deadline = now + kSendTimeout;
  }
  connection.reply += bytes;
  flush_stream(connection, now);
}

void ConnectionGate::Impl::flush_stream(Connection& connection, Clock::time_point now) {
  const size_t sent_before = connection.reply_sent;
  switch (send_pending(connection)) {
    case SendResult::kDone:
      connection.reply.clear();
      connection.reply_sent = 0;
      watch(connection, 0);
      return;
    case SendResult::kBlocked:
      // The client takes its stream, if slowly: its time counts from its last progress.
      if (connection.reply_sent > sent_before) connection.deadline = now + kSendTimeout;
      watch(connection, EPOLLOUT);
      return;
    case SendResult::kFailed:
      give_up_stream(connection);
      return;
  }
}

void ConnectionGate::Impl::give_up_stream(Connection& connection) {
  connection.channel->give_up();
  std::string().swap(connection.reply);
  connection.reply_sent = 0;
  watch(connection, 0);
}

void ConnectionGate::Impl::send_reply(Connection& connection, std::string reply, bool keep_alive,
                                      Clock::time_point now) {
  set_phase(connection, Phase::kSending);
  connection.reply = std::move(reply);
  connection.reply_sent = 0;
  connection.keep_alive = keep_alive;
  connection.deadline = now + kSendTimeout;
  flush(connection, now);
}

SendResult ConnectionGate::Impl::send_pending(Connection& connection) {
  while (connection.reply_sent < connection.reply.size()) {
    const ssize_t sent = send(connection.fd, connection.reply.data() + connection.reply_sent,
                              connection.reply.size() - connection.reply_sent, MSG_NOSIGNAL);
    if (sent > 0) {
      connection.reply_sent += static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return SendResult::kBlocked;
    return SendResult::kFailed;
  }
  return SendResult::kDone;
}

void ConnectionGate::Impl::flush(Connection& connection, Clock::time_point now) {
  switch (send_pending(connection)) {
    case SendResult::kDone: break;
    case SendResult::kBlocked: watch(connection, EPOLLOUT); return;
    case SendResult::kFailed: close_connection(connection); return;
  }
  std::string().swap(connection.reply);
  if (!connection.keep_alive || draining) {
    linger(connection, now);
    return;
  }
  set_phase(connection, Phase::kReading);
  // Bytes of a next request may have come with the last one (pipelining).
  connection.request_started = !connection.received.empty();
  connection.deadline = now + seconds(connection.request_started ? limits.header_timeout_s : limits.idle_timeout_s);
  watch(connection, EPOLLIN);
  dispatch_if_complete(connection, now);
}

void ConnectionGate::Impl::linger(Connection& connection, Clock::time_point now) {
  const size_t closing_with_this_one = closing_count + (counts_as_open(connection) ? 1 : 0);
  if (closing_with_this_one > limits.max_connections) {
    close_connection(connection);
    return;
  }
  shutdown(connection.fd, SHUT_WR);
  set_phase(connection, Phase::kLingering);
  std::string().swap(connection.received);
  connection.deadline = now + kLingerTimeout;
  watch(connection, EPOLLIN);
}

void ConnectionGate::Impl::drop_input(Connection& connection) {
  char chunk[kReadChunk];
  for (;;) {
    const ssize_t got = recv(connection.fd, chunk, sizeof(chunk), 0);
    if (got > 0) continue;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_connection(connection);
    return;
  }
}

void ConnectionGate::Impl::sweep(Clock::time_point now) {
  if (!accepting && !draining) {
    accepting = true;
    add_to_epoll(listen_fd, EPOLLIN);
  }
  std::vector<int> expired;
  for (const auto& [fd, connection] : connections) {
    // A worker's connection has a deadline only while streamed bytes wait for the client.
    const bool has_deadline = connection.phase != Phase::kAnswering || !connection.reply.empty();
    if (has_deadline && connection.deadline <= now) expired.push_back(fd);
  }
  for (const int fd : expired) {
    Connection& connection = connections.at(fd);
    if (connection.phase == Phase::kAnswering) {
      give_up_stream(connection);  // the client did not take its stream: the worker stops
    } else if (connection.phase == Phase::kReading && connection.request_started) {
      send_reply(connection,
                 refusal_reply(408, "the request did not arrive whole within " +
                                        shown_seconds(limits.header_timeout_s) + " s (--header-timeout)",
                              {}, error_body),
                 false, now);
    } else {
      close_connection(connection);  // idle, or not taking its answer, or done lingering
    }
  }
}

ConnectionGate::ConnectionGate(int listen_fd, const GateLimits& limits, size_t worker_threads, Answer answer,
                               ErrorBody error_body)
    : impl_(std::make_unique<Impl>(listen_fd, limits, worker_threads, std::move(answer), error_body)) {}

ConnectionGate::~ConnectionGate() = default;

void ConnectionGate::run() { impl_->run(); }

void ConnectionGate::stop() { impl_->stop(); }

}  // namespace canrun
