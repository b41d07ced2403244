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

// A client gets this long to take an answer; the gate holds its bytes meanwhile.
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
  kAnswering,  // a worker has the request; the gate does not watch the socket
  kSending,    // writing the answer
  kLingering,  // answer sent and FIN too; dropping what still arrives until the client closes
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
  std::string reply;
  size_t reply_sent = 0;
  bool keep_alive = false;  // after `reply`
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

struct Completion {
  int fd;
  GateReply reply;
};

}  // namespace

struct ConnectionGate::Impl {
  Impl(int listen_fd, const GateLimits& limits, size_t worker_threads, Answer answer)
      : listen_fd(listen_fd), limits(limits), answer(std::move(answer)) {
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
  void flush(Connection& connection, Clock::time_point now);
  void linger(Connection& connection, Clock::time_point now);
  void drop_input(Connection& connection);
  void take_completions(Clock::time_point now);
  void sweep(Clock::time_point now);

  const int listen_fd;
  const GateLimits limits;
  const Answer answer;
  std::unique_ptr<httplib::ThreadPool> workers;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping = false;

  std::unordered_map<int, Connection> connections;
  size_t open_count = 0;     // admitted and not yet lingering: what max_connections bounds
  size_t closing_count = 0;  // refused or lingering; bounded by max_connections too
  bool accepting = true;     // false after the process ran out of descriptors, until the next sweep

  std::mutex completions_mutex;
  std::vector<Completion> completions;
};

void ConnectionGate::Impl::run() {
  std::vector<epoll_event> events(256);
  Clock::time_point last_sweep = Clock::now();
  while (!stopping) {
    const bool needs_sweeps = !connections.empty() || !accepting;
    const int timeout_ms = needs_sweeps ? static_cast<int>(kSweepInterval.count()) : -1;
    const int ready = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "epoll_wait");
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < std::max(ready, 0); ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd) {
        accept_connections(now);
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
          case Phase::kAnswering: break;
        }
      }
    }
    if (now - last_sweep >= kSweepInterval) {
      sweep(now);
      last_sweep = now;
    }
  }
  // Answers in progress finish, but nobody sends them any more.
  stop_workers();
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
                        {{"Retry-After", "1"}});
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
                                      std::to_string(limits.max_head_bytes) + " bytes"),
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
  workers->enqueue([this, request = std::move(request)] {
    GateReply reply{"", false};
    try {
      reply = answer(request);
    } catch (const std::exception&) {
      // Nothing can be said on this connection any more: it closes without an answer.
    }
    {
      std::lock_guard lock(completions_mutex);
      completions.push_back({request.fd, std::move(reply)});
    }
    wake();
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
    ++connection.answered;
    send_reply(connection, std::move(completion.reply.bytes), completion.reply.keep_alive, now);
  }
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

void ConnectionGate::Impl::flush(Connection& connection, Clock::time_point now) {
  while (connection.reply_sent < connection.reply.size()) {
    const ssize_t sent = send(connection.fd, connection.reply.data() + connection.reply_sent,
                              connection.reply.size() - connection.reply_sent, MSG_NOSIGNAL);
    if (sent > 0) {
      connection.reply_sent += static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch(connection, EPOLLOUT);
      return;
    }
    close_connection(connection);
    return;
  }
  std::string().swap(connection.reply);
  if (!connection.keep_alive) {
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
  if (!accepting) {
    accepting = true;
    add_to_epoll(listen_fd, EPOLLIN);
  }
  std::vector<int> expired;
  for (const auto& [fd, connection] : connections)
    if (connection.phase != Phase::kAnswering && connection.deadline <= now) expired.push_back(fd);
  for (const int fd : expired) {
    Connection& connection = connections.at(fd);
    if (connection.phase == Phase::kReading && connection.request_started) {
      send_reply(connection,
                 refusal_reply(408, "the request did not arrive whole within " +
                                        shown_seconds(limits.header_timeout_s) + " s (--header-timeout)"),
                 false, now);
    } else {
      close_connection(connection);  // idle, or not taking its answer, or done lingering
    }
  }
}

ConnectionGate::ConnectionGate(int listen_fd, const GateLimits& limits, size_t worker_threads, Answer answer)
    : impl_(std::make_unique<Impl>(listen_fd, limits, worker_threads, std::move(answer))) {}

ConnectionGate::~ConnectionGate() = default;

void ConnectionGate::run() { impl_->run(); }

void ConnectionGate::stop() { impl_->stop(); }

}  // namespace canrun
