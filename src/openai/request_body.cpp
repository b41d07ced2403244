#include "openai/request_body.h"

#include "openai/api_error.h"

namespace canrun {

OrderedJson parse_request_object(const std::string& body) {
  OrderedJson json = OrderedJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!json.is_object()) throw ApiError(400, std::string("the request body must be a JSON object, got ") + json.type_name());
  return json;
}

const OrderedJson* request_field(const OrderedJson& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

void invalid_param(const std::string& param, const std::string& message) {
  throw ApiError(400, param + ": " + message, param);
}

}  // namespace canrun
