#include "openai/completion_request.h"

#include <cstdio>
#include <limits>

#include "chat/conversation_file.h"
#include "openai/api_error.h"
#include "openai/request_body.h"
#include "util/error.h"

namespace canrun {
namespace {

std::string shown(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

double number(const OrderedJson& body, const char* name, double low, double high, double fallback) {
  const OrderedJson* value = request_field(body, name);
  if (!value) return fallback;
  if (!value->is_number()) invalid_param(name, "expected a number, got " + std::string(value->type_name()));
  const double x = value->get<double>();
  // A number too large for a double reads as infinite; dump() would show it as null.
  if (!(x >= low && x <= high))
    invalid_param(name, "must be between " + shown(low) + " and " + shown(high) + ", got " + shown(x));
  return x;
}

std::optional<int64_t> integer(const OrderedJson& body, const char* name, int64_t low,
                               int64_t high = std::numeric_limits<int64_t>::max()) {
  const OrderedJson* value = request_field(body, name);
  if (!value) return std::nullopt;
  if (!value->is_number_integer()) invalid_param(name, "expected an integer, got " + value->dump());
  // An unsigned value past int64's range would wrap to a negative one.
  const bool too_large = value->is_number_unsigned() ? value->get<uint64_t>() > static_cast<uint64_t>(high)
                                                     : value->get<int64_t>() > high;
  if (too_large) invalid_param(name, "must be at most " + std::to_string(high) + ", got " + value->dump());
  const int64_t x = value->get<int64_t>();
  if (x < low) invalid_param(name, "must be at least " + std::to_string(low) + ", got " + std::to_string(x));
  return x;
}

bool flag(const OrderedJson& body, const char* name) {
  const OrderedJson* value = request_field(body, name);
  if (!value) return false;
  if (!value->is_boolean()) invalid_param(name, "expected true or false, got " + value->dump());
  return value->get<bool>();
}

// What canrun does not offer is refused rather than ignored: an answer that silently differs from
// the one asked for would be worse.
void refuse_unsupported(const OrderedJson& body) {
  if (const std::optional<int64_t> n = integer(body, "n", 1); n && *n != 1) invalid_param("n", "only 1 choice is supported");
  if (const std::optional<int64_t> n = integer(body, "best_of", 1); n && *n != 1)
    invalid_param("best_of", "only 1 is supported");
  for (const char* penalty : {"presence_penalty", "frequency_penalty"})
    if (number(body, penalty, -2, 2, 0) != 0) invalid_param(penalty, "not supported (only 0)");
  for (const char* name : {"logprobs", "top_logprobs", "logit_bias", "suffix", "echo"}) {
    const OrderedJson* value = request_field(body, name);
    if (value && !(value->is_boolean() && !value->get<bool>())) invalid_param(name, "not supported");
  }
  if (const OrderedJson* format = request_field(body, "response_format");
      format && !(format->is_object() && format->value("type", "") == "text"))
    invalid_param("response_format", "only {\"type\": \"text\"} is supported");
}

std::vector<std::string> stop_strings(const OrderedJson& body) {
  const OrderedJson* value = request_field(body, "stop");
  if (!value) return {};
  std::vector<std::string> stops;
  const OrderedJson list = value->is_string() ? OrderedJson::array({*value}) : *value;
  if (!list.is_array()) invalid_param("stop", "expected a string or a list of strings");
  for (const OrderedJson& stop : list) {
    if (!stop.is_string() || stop.get<std::string>().empty()) invalid_param("stop", "expected non-empty strings");
    stops.push_back(stop.get<std::string>());
  }
  return stops;
}

void read_prompt(const OrderedJson& body, CompletionRequest& request) {
  const OrderedJson* prompt = request_field(body, "prompt");
  if (!prompt) invalid_param("prompt", "required");
  if (prompt->is_string()) {
    request.prompt = prompt->get<std::string>();
    return;
  }
  // A list of one string, or token ids (a list of lists would be a batch: several choices).
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    request.prompt = (*prompt)[0].get<std::string>();
    return;
  }
  if (!prompt->is_array() || prompt->empty())
    invalid_param("prompt", "expected a string, a list of one string or a non-empty list of token ids");
  std::vector<int32_t> ids;
  for (const OrderedJson& id : *prompt) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
      invalid_param("prompt", "a list prompt holds token ids (non-negative integers); a batch of prompts is not supported");
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  request.prompt_ids = std::move(ids);
}

// A content of text parts only ([{"type": "text", "text": ...}], as LangChain sends it) becomes
// their texts joined with "\n", as vLLM and llama-server render it for templates that expect a
// string; content with an image part stays a list for the image handling.
OrderedJson with_text_parts_joined(OrderedJson messages) {
  for (OrderedJson& message : messages) {
    OrderedJson* content = message.contains("content") ? &message["content"] : nullptr;
    if (!content || !content->is_array() || content->empty()) continue;
    std::string joined;
    bool text_only = true;
    for (const OrderedJson& part : *content) {
      text_only = part.value("type", "") == "text";
      if (!text_only) break;
      if (&part != &content->front()) joined += "\n";
      joined += part["text"].get<std::string>();
    }
    if (text_only) *content = joined;
  }
  return messages;
}

void read_messages(const OrderedJson& body, CompletionRequest& request) {
  const OrderedJson* messages = request_field(body, "messages");
  if (!messages) invalid_param("messages", "required");
  try {
    check_messages(*messages, "messages");
  } catch (const Error& e) {
    throw ApiError(400, e.what(), "messages");
  }
  request.conversation.messages = with_text_parts_joined(*messages);
  if (const OrderedJson* tools = request_field(body, "tools")) {
    if (!tools->is_array()) invalid_param("tools", "expected a list of tools");
    request.conversation.tools = *tools;
  }
  continue_or_prompt(request.conversation);
}

}  // namespace

CompletionRequest parse_completion_request(const std::string& text, bool chat) {
  const OrderedJson body = parse_request_object(text);
  CompletionRequest request;
  request.chat = chat;
  if (const OrderedJson* model = request_field(body, "model")) {
    if (!model->is_string()) invalid_param("model", "expected a string");
    request.model = model->get<std::string>();
  }
  if (chat) read_messages(body, request);
  else read_prompt(body, request);
  refuse_unsupported(body);
  // Chat's newer name first, as OpenAI reads it. The context bounds it further once the prompt
  // is tokenized.
  request.max_tokens = integer(body, "max_completion_tokens", 1);
  if (!request.max_tokens) request.max_tokens = integer(body, "max_tokens", 1);
  const double temperature = number(body, "temperature", 0, 2, 1);
  request.sampling.do_sample = temperature > 0;
  request.sampling.temperature = temperature > 0 ? temperature : 1;
  request.sampling.top_p = number(body, "top_p", 0, 1, 1);
  if (request.sampling.top_p == 0) invalid_param("top_p", "must be above 0");
  const std::optional<int64_t> top_k = integer(body, "top_k", -1, std::numeric_limits<int32_t>::max());
  request.sampling.top_k = top_k && *top_k > 0 ? *top_k : 0;  // -1 and 0: every token, as vLLM reads them
  if (request_field(body, "min_p")) request.sampling.min_p = number(body, "min_p", 0, 1, 0);
  request.sampling.repetition_penalty = number(body, "repetition_penalty", 0.01, 100, 1);
  if (const std::optional<int64_t> seed = integer(body, "seed", 0)) request.sampling.seed = static_cast<uint64_t>(*seed);
  // What the sampler itself refuses (a temperature too small to divide by) is a 400 here too.
  if (const std::optional<SamplingProblem> problem = sampling_problem(request.sampling))
    invalid_param(problem->field, problem->message);
  request.stop = stop_strings(body);
  request.stream = flag(body, "stream");
  if (const OrderedJson* options = request_field(body, "stream_options")) {
    if (!options->is_object()) invalid_param("stream_options", "expected an object");
    if (!request.stream) invalid_param("stream_options", "only allowed with stream: true");
    request.include_usage = flag(*options, "include_usage");
  }
  request.ignore_eos = flag(body, "ignore_eos");
  return request;
}

}  // namespace canrun
