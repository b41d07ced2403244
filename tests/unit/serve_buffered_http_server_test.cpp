// httplib's routing over a request received whole: the answer comes back as bytes, and the
// connection stays open only when the request, its head, the keep-alive count and the framing
// allow it.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "serve/buffered_http_server.h"

namespace canrun {
namespace {

ReceivedRequest received(const std::string& bytes, bool reusable = true, int earlier_requests = 0) {
  return {bytes, reusable, earlier_requests, -1, "127.0.0.1", 50000, "127.0.0.1", 8080};
}

class ServeBufferedHttpServer : public testing::Test {
 protected:
  ServeBufferedHttpServer() {
    server_.set_keep_alive_max_count(3);
    server_.Get("/hello", [](const httplib::Request& request, httplib::Response& response) {
      response.set_content("hello " + request.remote_addr + " " + request.body, "text/plain");
    });
  }
  BufferedHttpServer server_;
};

TEST_F(ServeBufferedHttpServer, AnswersThroughTheRoutesAndKeepsTheConnection) {
  const GateReply reply = server_.answer(received("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(reply.bytes.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply.bytes;
  EXPECT_NE(reply.bytes.find("\r\n\r\nhello 127.0.0.1 "), std::string::npos) << reply.bytes;
  EXPECT_TRUE(reply.keep_alive);
  const GateReply head = server_.answer(received("HEAD /hello HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(head.bytes.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(head.bytes.find("hello"), std::string::npos);
}

TEST_F(ServeBufferedHttpServer, TheBodyOfAGetIsIgnored) {
  const GateReply reply =
      server_.answer(received("GET /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n\r\nbody"));
  EXPECT_NE(reply.bytes.find("\r\n\r\nhello 127.0.0.1 "), std::string::npos) << reply.bytes;
  EXPECT_EQ(reply.bytes.find("body"), std::string::npos) << reply.bytes;
  EXPECT_TRUE(reply.keep_alive);
}

TEST_F(ServeBufferedHttpServer, ClosesWhenTheRequestTheCountTheFramingOrAnUnreadableHeadSaysSo) {
  const std::string request = "GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n";
  const GateReply asked = server_.answer(received("GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n"));
  EXPECT_FALSE(asked.keep_alive);
  const GateReply counted = server_.answer(received(request, true, 2));
  EXPECT_FALSE(counted.keep_alive);
  EXPECT_NE(counted.bytes.find("Connection: close\r\n"), std::string::npos);
  const GateReply unframed = server_.answer(received(request, false));
  EXPECT_FALSE(unframed.keep_alive);
  EXPECT_NE(unframed.bytes.find("Connection: close\r\n"), std::string::npos);
  const GateReply unparsed = server_.answer(received("GET /hello\r\n\r\n"));
  EXPECT_EQ(unparsed.bytes.rfind("HTTP/1.1 400 ", 0), 0u) << unparsed.bytes;
  EXPECT_FALSE(unparsed.keep_alive);
  const GateReply too_long = server_.answer(received("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(too_long.bytes.rfind("HTTP/1.1 414 ", 0), 0u);
  EXPECT_FALSE(too_long.keep_alive);
}

// Collects what a worker streams; `gone` plays a client that left.
class RecordingChannel : public ReplyChannel {
 public:
  bool write(std::string bytes) override {
    if (gone) return false;
    writes.push_back(std::move(bytes));
    return true;
  }
  bool closed() const override { return gone; }

  std::vector<std::string> writes;
  bool gone = false;
};

// Each call of the provider writes one event; the next call's is_writable() hands it over.
void serve_three_events(BufferedHttpServer& server, int* calls) {
  server.Get("/events", [calls](const httplib::Request&, httplib::Response& response) {
    response.set_chunked_content_provider("text/event-stream", [calls](size_t, httplib::DataSink& sink) {
      if (!sink.is_writable()) return false;
      const std::string event = "data: " + std::to_string(++*calls) + "\n\n";
      sink.write(event.data(), event.size());
      if (*calls == 3) sink.done();
      return true;
    });
  });
}

TEST_F(ServeBufferedHttpServer, AStreamedAnswerGoesToTheChannelPieceByPiece) {
  int calls = 0;
  serve_three_events(server_, &calls);
  RecordingChannel channel;
  ReceivedRequest request = received("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n");
  request.channel = &channel;
  const GateReply reply = server_.answer(request);
  ASSERT_EQ(channel.writes.size(), 3u);  // the head, then the first two events
  EXPECT_EQ(channel.writes[0].rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << channel.writes[0];
  EXPECT_NE(channel.writes[0].find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(channel.writes[1].find("data: 1"), std::string::npos);
  EXPECT_NE(channel.writes[2].find("data: 2"), std::string::npos);
  EXPECT_NE(reply.bytes.find("data: 3"), std::string::npos);
  EXPECT_NE(reply.bytes.find("0\r\n\r\n"), std::string::npos);
  EXPECT_TRUE(reply.keep_alive);
}

TEST_F(ServeBufferedHttpServer, AStreamStopsWhenTheClientLeaves) {
  int calls = 0;
  serve_three_events(server_, &calls);
  RecordingChannel channel;
  channel.gone = true;
  ReceivedRequest request = received("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n");
  request.channel = &channel;
  const GateReply reply = server_.answer(request);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(reply.keep_alive);
}

}  // namespace
}  // namespace canrun
