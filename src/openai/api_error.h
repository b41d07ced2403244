// Errors of the OpenAI-compatible server as OpenAI's API words them: an HTTP status and the body
// {"error": {"message", "type", "param", "code"}} that its clients read.
#pragma once

#include <stdexcept>
#include <string>

#include "util/json.h"

namespace canrun {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status_(status), param_(std::move(param)), code_(std::move(code)) {}
  int status() const { return status_; }
  Json body() const;

 private:
  int status_;
  std::string param_;  // the request field at fault, when there is one
  std::string code_;
};

// The error type OpenAI's API gives a status: invalid_request_error for 4xx, rate_limit_error
// for 429, server_error for 5xx.
std::string error_type(int status);

// The body of an error that has only a status and a message.
Json error_body(int status, const std::string& message);

// error_body as text, for the connection gate's own refusals (408, 431, 503).
std::string error_body_text(int status, std::string_view message);

}  // namespace canrun
