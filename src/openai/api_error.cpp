#include "openai/api_error.h"

#include "openai/completion_response.h"

namespace canrun {

std::string error_type(int status) {
  if (status == 429) return "rate_limit_error";
  if (status == 401 || status == 403) return "authentication_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

Json error_body(int status, const std::string& message) {
  return {{"error", {{"message", message}, {"type", error_type(status)}, {"param", nullptr}, {"code", nullptr}}}};
}

std::string error_body_text(int status, std::string_view message) {
  return json_text(error_body(status, std::string(message)));
}

Json ApiError::body() const {
  Json body = error_body(status_, what());
  if (!param_.empty()) body["error"]["param"] = param_;
  if (!code_.empty()) body["error"]["code"] = code_;
  return body;
}

}  // namespace canrun
