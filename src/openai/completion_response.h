// The response objects of OpenAI's completions and chat completions APIs: whole, or as the
// chunks of a stream (server-sent events, ended by "data: [DONE]").
#pragma once

#include <cstdint>
#include <string>

#include "util/json.h"

namespace canrun {

struct ResponseIdentity {
  std::string id;  // cmpl-... or chatcmpl-...
  int64_t created = 0;  // Unix seconds
  std::string model;
  bool chat = false;
};

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

Json whole_response(const ResponseIdentity& identity, const std::string& text, const std::string& finish_reason,
                    int64_t prompt_tokens, int64_t completion_tokens);

// A chunk of text (chat: a delta of content); `finish_reason` null until the last.
Json text_chunk(const ResponseIdentity& identity, const std::string& text, const Json& finish_reason = nullptr);
// Chat's first chunk: the assistant role, no content yet.
Json role_chunk(const ResponseIdentity& identity);
// After the last chunk, with stream_options.include_usage: no choices, the usage.
Json usage_chunk(const ResponseIdentity& identity, int64_t prompt_tokens, int64_t completion_tokens);

// JSON text; bytes that are not UTF-8 (never in decoded text, but a response must not fail on
// them) become U+FFFD.
std::string json_text(const Json& value);
// One server-sent event.
std::string sse_event(const Json& data);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace canrun
