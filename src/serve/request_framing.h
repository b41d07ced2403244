// Where one HTTP/1.1 request ends in the bytes received so far: the head up to its blank line,
// then a Content-Length body. The connection gate reads this much before a worker sees the
// request, so a worker never waits on a slow client.
#pragma once

#include <cstddef>
#include <string_view>

namespace canrun {

struct RequestFraming {
  enum class Status {
    kIncomplete,    // more bytes are needed
    kComplete,      // the request is the first `length` bytes
    kHeadTooLarge,  // no blank line within the head limit
  };
  Status status = Status::kIncomplete;
  size_t length = 0;
  // False when the body's end is not known (Transfer-Encoding, an unreadable or repeated
  // Content-Length, a body over the limit): nothing after this request can be trusted as the
  // next one, so the connection closes after the answer.
  bool reusable = true;
};

RequestFraming frame_request(std::string_view received, size_t max_head_bytes, size_t max_body_bytes);

// The method of a request line: the token before its first space; empty when there is none.
std::string_view request_method(std::string_view request);

}  // namespace canrun
