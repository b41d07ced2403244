// The connection gate over real loopback sockets: whole requests reach the workers (pipelined
// or with a body), a request that does not arrive whole within the deadline gets 408 however
// it trickles, idle connections close, past the limit a connection gets 503, and slow or idle
// connections do not delay anyone else. Deadlines here are short; bounds on time are generous.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "serve/connection_gate.h"
#include "serve/listener.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Answers every request with its own first line as the body.
GateReply echo_request_line(const ReceivedRequest& request) {
  const std::string body = request.bytes.substr(0, request.bytes.find("\r\n")) + " (" +
                           std::to_string(request.bytes.size()) + " bytes)";
  return {"HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
          request.reusable};
}

class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{5, 0};  // no test waits this long unless the gate is broken
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  Client(const Client&) = delete;
  ~Client() { close(fd_); }

  bool connected() const { return connected_; }

  void send_text(const std::string& text) { ASSERT_TRUE(try_send(text)); }

  bool try_send(const std::string& text) {
    return send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }

  // One response whose head has a Content-Length; empty when the connection closed first.
  std::string read_response() {
    for (;;) {
      const size_t head_end = pending_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t length_at = pending_.find("Content-Length: ");
        const size_t length = length_at < head_end ? std::stoul(pending_.substr(length_at + 16)) : 0;
        if (pending_.size() >= head_end + 4 + length) {
          std::string response = pending_.substr(0, head_end + 4 + length);
          pending_.erase(0, response.size());
          return response;
        }
      }
      if (!receive()) return "";
    }
  }

  // Reads until `text` has arrived (kept for read_response); false when the connection closed first.
  bool read_until(const std::string& text) {
    while (pending_.find(text) == std::string::npos)
      if (!receive()) return false;
    return true;
  }

  // Everything until the gate closes the connection.
  std::string read_until_closed() {
    while (receive()) {
    }
    return std::exchange(pending_, "");
  }

 private:
  bool receive() {
    char chunk[4096];
    const ssize_t got = recv(fd_, chunk, sizeof(chunk), 0);
    if (got <= 0) return false;
    pending_.append(chunk, static_cast<size_t>(got));
    return true;
  }

  int fd_;
  bool connected_ = false;
  std::string pending_;
};

class ServeConnectionGate : public testing::Test {
 protected:
  void start(const GateLimits& limits, size_t workers = 2, ConnectionGate::Answer answer = echo_request_line) {
    std::optional<Listener> opened = Listener::open("127.0.0.1", 0);
    ASSERT_TRUE(opened);
    listener_.emplace(std::move(*opened));
    gate_.emplace(listener_->fd(), limits, workers, std::move(answer));
    thread_ = std::thread([this] { gate_->run(); });
  }

  void TearDown() override {
    if (gate_) gate_->stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return listener_->port(); }

  static GateLimits short_limits() {
    GateLimits limits;
    limits.header_timeout_s = 0.4;
    limits.idle_timeout_s = 0.4;
    limits.max_head_bytes = 4096;
    limits.max_body_bytes = 1024;
    return limits;
  }

  std::optional<Listener> listener_;
  std::optional<ConnectionGate> gate_;
  std::thread thread_;
};

TEST_F(ServeConnectionGate, AnswersRequestsOnOneConnectionInOrderPipelinedOrNot) {
  start(short_limits());
  Client client(port());
  client.send_text("GET /one HTTP/1.1\r\n\r\n");
  EXPECT_NE(client.read_response().find("GET /one HTTP/1.1 (21 bytes)"), std::string::npos);
  client.send_text("GET /two HTTP/1.1\r\n\r\nGET /three HTTP/1.1\r\n\r\n");
  EXPECT_NE(client.read_response().find("GET /two"), std::string::npos);
  EXPECT_NE(client.read_response().find("GET /three"), std::string::npos);
}

TEST_F(ServeConnectionGate, TheWorkerGetsTheBodyWithTheHead) {
  start(short_limits());
  Client client(port());
  const std::string head = "GET /b HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
  client.send_text(head + "ab");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  client.send_text("cde");
  EXPECT_NE(client.read_response().find("(" + std::to_string(head.size() + 5) + " bytes)"), std::string::npos);
}

TEST_F(ServeConnectionGate, ARequestThatTricklesInGets408AtTheDeadline) {
  start(short_limits());
  Client client(port());
  const Clock::time_point start = Clock::now();
  // A byte every 50 ms: each arrives well within any per-read timeout, the whole never does.
  std::thread trickle([&client] {
    const std::string head = "GET / HTTP/1.1\r\nX-Slow: ";
    for (size_t i = 0; i < 40; ++i) {
      if (!client.try_send(std::string(1, i < head.size() ? head[i] : 'x'))) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const std::string reply = client.read_until_closed();
  const double elapsed = seconds_since(start);
  trickle.join();
  EXPECT_EQ(reply.rfind("HTTP/1.1 408 Request Timeout\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos);
  EXPECT_GE(elapsed, 0.3);
  EXPECT_LT(elapsed, 1.4);
}

TEST_F(ServeConnectionGate, AFirstRequestsTimeCountsFromTheConnectionsOpening) {
  GateLimits limits = short_limits();
  limits.header_timeout_s = 0.5;
  start(limits);
  Client client(port());
  const Clock::time_point start = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  client.send_text("GET / HTTP/1.1\r\n");
  const std::string reply = client.read_until_closed();
  EXPECT_EQ(reply.rfind("HTTP/1.1 408 ", 0), 0u) << reply;
  EXPECT_LT(seconds_since(start), 0.85);  // a deadline from the first byte would end at 0.95 s
}

TEST_F(ServeConnectionGate, AConnectionThatSendsNothingClosesSilentlyAtTheDeadline) {
  start(short_limits());
  Client client(port());
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(client.read_until_closed(), "");
  EXPECT_GE(seconds_since(start), 0.3);
  EXPECT_LT(seconds_since(start), 1.4);
}

TEST_F(ServeConnectionGate, AKeepAliveConnectionClosesAfterTheIdleTimeout) {
  GateLimits limits = short_limits();
  limits.header_timeout_s = 5;
  start(limits);
  Client client(port());
  client.send_text("GET / HTTP/1.1\r\n\r\n");
  ASSERT_NE(client.read_response(), "");
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(client.read_until_closed(), "");
  EXPECT_GE(seconds_since(start), 0.3);
  EXPECT_LT(seconds_since(start), 1.4);
}

TEST_F(ServeConnectionGate, AHeadOverTheLimitGets431) {
  start(short_limits());
  Client client(port());
  client.send_text("GET /" + std::string(5000, 'a'));
  const std::string reply = client.read_until_closed();
  EXPECT_EQ(reply.rfind("HTTP/1.1 431 ", 0), 0u) << reply.substr(0, 200);
}

TEST_F(ServeConnectionGate, PastTheLimitANewConnectionGets503AndALaterOneIsServed) {
  GateLimits limits = short_limits();
  limits.max_connections = 2;
  start(limits);
  std::optional<Client> first(port());
  Client second(port());
  first->send_text("GET /first HTTP/1.1\r\n\r\n");
  ASSERT_NE(first->read_response(), "");  // both are open and counted now
  second.send_text("GET /second HTTP/1.1\r\n\r\n");
  ASSERT_NE(second.read_response(), "");

  Client refused(port());
  refused.try_send("GET /third HTTP/1.1\r\n\r\n");
  const Clock::time_point start = Clock::now();
  const std::string reply = refused.read_until_closed();
  EXPECT_LT(seconds_since(start), 0.3);
  EXPECT_EQ(reply.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Retry-After: 1\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("--max-connections"), std::string::npos);

  first.reset();
  // The gate sees the close on its next read of that connection; give it a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Client later(port());
  later.send_text("GET /later HTTP/1.1\r\n\r\n");
  EXPECT_NE(later.read_response().find("GET /later"), std::string::npos);
}

TEST_F(ServeConnectionGate, SlowAndIdleConnectionsDoNotDelayARequest) {
  GateLimits limits = short_limits();
  limits.header_timeout_s = 30;
  start(limits, 1);
  std::vector<std::unique_ptr<Client>> attackers;
  for (int i = 0; i < 100; ++i) {
    attackers.push_back(std::make_unique<Client>(port()));
    ASSERT_TRUE(attackers.back()->connected());
    if (i % 2 == 1) attackers.back()->send_text("GET / HTTP/1.1\r\nX-Slow: 1\r\n");
  }
  for (int i = 0; i < 5; ++i) {
    Client client(port());
    const Clock::time_point start = Clock::now();
    client.send_text("GET /normal HTTP/1.1\r\n\r\n");
    EXPECT_NE(client.read_response().find("GET /normal"), std::string::npos);
    EXPECT_LT(seconds_since(start), 0.5);
  }
}

TEST_F(ServeConnectionGate, StopsWithConnectionsOpen) {
  start(short_limits());
  Client idle(port());
  Client partial(port());
  partial.send_text("GET / HTTP/1.1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Clock::time_point start = Clock::now();
  gate_->stop();
  thread_.join();
  EXPECT_LT(seconds_since(start), 1.0);
}

// A streamed answer: what the worker writes to its channel reaches the client while the worker
// still works, and the bytes it returns follow.
TEST_F(ServeConnectionGate, StreamedPartsReachTheClientBeforeTheAnswerEnds) {
  std::promise<void> part_read;
  std::shared_future<void> part_was_read = part_read.get_future().share();
  start(short_limits(), 2, [part_was_read](const ReceivedRequest& request) {
    request.channel->write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc");
    part_was_read.wait_for(std::chrono::seconds(5));
    return GateReply{"def", true};
  });
  Client client(port());
  client.send_text("GET /stream HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(client.read_until("abc"));
  part_read.set_value();
  EXPECT_NE(client.read_response().find("\r\n\r\nabcdef"), std::string::npos);
  // The connection stays open for a next request.
  client.send_text("GET /stream HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(client.read_until("abc"));
}

TEST_F(ServeConnectionGate, AClientThatLeavesMidStreamFailsTheWorkersWrites) {
  std::promise<double> refused_after;
  std::future<double> refused = refused_after.get_future();
  start(short_limits(), 2, [&refused_after](const ReceivedRequest& request) {
    request.channel->write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n");
    const Clock::time_point start = Clock::now();
    while (request.channel->write("1\r\nb\r\n") && seconds_since(start) < 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    refused_after.set_value(seconds_since(start));
    return GateReply{"0\r\n\r\n", true};
  });
  {
    Client client(port());
    client.send_text("GET /stream HTTP/1.1\r\n\r\n");
    ASSERT_TRUE(client.read_until("a\r\n"));
  }
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(6)), std::future_status::ready);
  EXPECT_LT(refused.get(), 2.0);
}

TEST_F(ServeConnectionGate, StopLetsTheAnswersInProgressFinishAndSendsThem) {
  start(short_limits(), 2, [](const ReceivedRequest& request) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return echo_request_line(request);
  });
  Client busy(port());
  busy.send_text("GET /slow HTTP/1.1\r\n\r\n");
  Client idle(port());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Clock::time_point start = Clock::now();
  gate_->stop();
  EXPECT_NE(busy.read_response().find("GET /slow"), std::string::npos);
  EXPECT_EQ(idle.read_until_closed(), "");
  thread_.join();
  EXPECT_LT(seconds_since(start), 2.0);
}

}  // namespace
}  // namespace canrun
