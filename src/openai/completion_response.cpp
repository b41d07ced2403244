#include "openai/completion_response.h"

namespace canrun {
namespace {

Json envelope(const ResponseIdentity& identity, bool chunk) {
  const char* object = identity.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", identity.id}, {"object", object}, {"created", identity.created}, {"model", identity.model},
          {"system_fingerprint", nullptr}};
}

}  // namespace

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

Json whole_response(const ResponseIdentity& identity, const std::string& text, const std::string& finish_reason,
                    int64_t prompt_tokens, int64_t completion_tokens) {
  Json response = envelope(identity, false);
  Json choice = {{"index", 0}, {"finish_reason", finish_reason}, {"logprobs", nullptr}};
  if (identity.chat) choice["message"] = {{"role", "assistant"}, {"content", text}};
  else choice["text"] = text;
  response["choices"] = Json::array({choice});
  response["usage"] = usage_json(prompt_tokens, completion_tokens);
  return response;
}

Json text_chunk(const ResponseIdentity& identity, const std::string& text, const Json& finish_reason) {
  Json chunk = envelope(identity, true);
  Json choice = {{"index", 0}, {"finish_reason", finish_reason}, {"logprobs", nullptr}};
  if (identity.chat) choice["delta"] = text.empty() && !finish_reason.is_null() ? Json::object() : Json{{"content", text}};
  else choice["text"] = text;
  chunk["choices"] = Json::array({choice});
  return chunk;
}

Json role_chunk(const ResponseIdentity& identity) {
  Json chunk = envelope(identity, true);
  chunk["choices"] = Json::array(
      {{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr},
        {"logprobs", nullptr}}});
  return chunk;
}

Json usage_chunk(const ResponseIdentity& identity, int64_t prompt_tokens, int64_t completion_tokens) {
  Json chunk = envelope(identity, true);
  chunk["choices"] = Json::array();
  chunk["usage"] = usage_json(prompt_tokens, completion_tokens);
  return chunk;
}

std::string json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string sse_event(const Json& data) { return "data: " + json_text(data) + "\n\n"; }

}  // namespace canrun
