// Where the connection gate cuts a request from the received bytes: the head up to its blank
// line and a Content-Length body; a connection whose next request cannot be found is not reused.
#include <gtest/gtest.h>

#include <string>

#include "serve/request_framing.h"

namespace canrun {
namespace {

constexpr size_t kHead = 1024;
constexpr size_t kBody = 100;

RequestFraming frame(const std::string& received) { return frame_request(received, kHead, kBody); }

TEST(ServeRequestFraming, AHeadIsCompleteAtItsBlankLine) {
  const std::string head = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(frame("GET / HTTP/1.1\r\nHost: localhost\r\n").status, RequestFraming::Status::kIncomplete);
  const RequestFraming framing = frame(head + "GET /next");
  EXPECT_EQ(framing.status, RequestFraming::Status::kComplete);
  EXPECT_EQ(framing.length, head.size());
  EXPECT_TRUE(framing.reusable);
}

TEST(ServeRequestFraming, AContentLengthBodyBelongsToTheRequest) {
  const std::string head = "GET / HTTP/1.1\r\ncontent-LENGTH:  5 \r\n\r\n";
  EXPECT_EQ(frame(head + "abc").status, RequestFraming::Status::kIncomplete);
  const RequestFraming framing = frame(head + "abcdeGET");
  EXPECT_EQ(framing.status, RequestFraming::Status::kComplete);
  EXPECT_EQ(framing.length, head.size() + 5);
  EXPECT_TRUE(framing.reusable);
}

TEST(ServeRequestFraming, AnUncertainBodyEndsTheConnectionAfterTheHead) {
  for (const std::string header : {"Transfer-Encoding: chunked\r\n", "Content-Length: 5\r\nContent-Length: 5\r\n",
                                   "Content-Length: five\r\n", "Content-Length: -1\r\n", "Content-Length: 101\r\n",
                                   "Content-Length: 99999999999999999999\r\n"}) {
    const std::string head = "POST / HTTP/1.1\r\n" + header + "\r\n";
    const RequestFraming framing = frame(head + "body");
    EXPECT_EQ(framing.status, RequestFraming::Status::kComplete) << header;
    EXPECT_EQ(framing.length, head.size()) << header;
    EXPECT_FALSE(framing.reusable) << header;
  }
}

TEST(ServeRequestFraming, AHeadPastTheLimitIsTooLarge) {
  EXPECT_EQ(frame("GET /" + std::string(kHead, 'a')).status, RequestFraming::Status::kHeadTooLarge);
  EXPECT_EQ(frame("GET /" + std::string(kHead, 'a') + " HTTP/1.1\r\n\r\n").status,
            RequestFraming::Status::kHeadTooLarge);
  const std::string fits = "GET /" + std::string(kHead - 20, 'a') + " HTTP/1.1\r\n\r\n";
  ASSERT_LE(fits.size(), kHead);
  EXPECT_EQ(frame(fits).status, RequestFraming::Status::kComplete);
}

TEST(ServeRequestFraming, TheMethodIsTheTokenBeforeTheFirstSpace) {
  EXPECT_EQ(request_method("GET / HTTP/1.1\r\n"), "GET");
  EXPECT_EQ(request_method("BREW /coffee HTCPCP/1.0\r\n"), "BREW");
  EXPECT_EQ(request_method(std::string("\x00\x01garbage\r\n\r\n", 13)), "");
  EXPECT_EQ(request_method(" / HTTP/1.1\r\n"), "");
  EXPECT_EQ(request_method("GET\r\n\r\n"), "");
}

}  // namespace
}  // namespace canrun
