// A /v1/completions or /v1/chat/completions request body, read and checked as OpenAI's API
// defines it: every field canrun honours, with an ApiError (400, naming the field) for a value
// out of range or a feature it does not offer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "runtime/sampling.h"

namespace canrun {

struct CompletionRequest {
  bool chat = false;
  std::string model;                         // empty: not given
  std::string prompt;                        // completions: text
  std::optional<std::vector<int32_t>> prompt_ids;  // completions: token ids instead
  Conversation conversation;                 // chat: messages (and tools)
  std::optional<int64_t> max_tokens;         // none: 16 for completions, the rest of the context for chat
  SamplingParams sampling;                   // temperature 1 samples, as OpenAI's default; 0 is greedy
  std::vector<std::string> stop;             // generation ends before any of these
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  bool ignore_eos = false;     // run to max_tokens (vLLM's and llama.cpp's extension, for benchmarks)
};

// Throws ApiError(400) for a body that is not a JSON object or a field that is wrong.
CompletionRequest parse_completion_request(const std::string& body, bool chat);

}  // namespace canrun
