// Answers written without httplib, for requests refused before it parses them (over the
// connection limit, too slow, too large, a method other than GET or HEAD): the same JSON error
// body (the server's own shape) and security headers as every other answer, and the connection
// closes after it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace canrun {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Sent with every answer of the Space.
const HeaderList& security_headers();

// The Space's error body: {"error": message, "status": status}
std::string json_error_body(int status, std::string_view message);

// A server's error body for a status and a message.
using ErrorBody = std::string (*)(int status, std::string_view message);

// A whole HTTP/1.1 response with `Connection: close`. `status` is one of 405, 408, 431, 503.
std::string refusal_reply(int status, std::string_view message, const HeaderList& extra_headers = {},
                          ErrorBody error_body = json_error_body);

}  // namespace canrun
