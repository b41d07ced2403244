#include "serve/refusal_reply.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace canrun {
namespace {

const char* reason_phrase(int status) {
  switch (status) {
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
  }
  throw std::logic_error("refusal_reply: no reason phrase for status " + std::to_string(status));
}

}  // namespace

const HeaderList& security_headers() {
  static const HeaderList headers = {
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"},
  };
  return headers;
}

std::string json_error_body(int status, std::string_view message) {
  const nlohmann::json body = {{"error", message}, {"status", status}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string refusal_reply(int status, std::string_view message, const HeaderList& extra_headers,
                          ErrorBody error_body) {
  const std::string body = error_body(status, message);
  std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  HeaderList headers = {{"Content-Type", "application/json; charset=utf-8"},
                        {"Content-Length", std::to_string(body.size())},
                        {"Cache-Control", "no-store"},
                        {"Connection", "close"}};
  headers.insert(headers.end(), security_headers().begin(), security_headers().end());
  headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
  for (const auto& [name, value] : headers) reply += name + ": " + value + "\r\n";
  return reply + "\r\n" + body;
}

}  // namespace canrun
