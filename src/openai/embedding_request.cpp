#include "openai/embedding_request.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"

namespace canrun {
namespace {

using OrderedJson = nlohmann::ordered_json;

[[noreturn]] void invalid(const std::string& param, const std::string& message) {
  throw ApiError(400, param + ": " + message, param);
}

OrderedJson parse_object(const std::string& body) {
  OrderedJson json = OrderedJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!json.is_object()) throw ApiError(400, std::string("the request body must be a JSON object, got ") + json.type_name());
  return json;
}

// The field when present and not null.
const OrderedJson* field(const OrderedJson& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool boolean(const OrderedJson& body, const char* name, bool fallback) {
  const OrderedJson* value = field(body, name);
  if (!value) return fallback;
  if (!value->is_boolean()) invalid(name, std::string("expected true or false, got ") + value->type_name());
  return value->get<bool>();
}

std::optional<std::string> optional_string(const OrderedJson& body, const char* name) {
  const OrderedJson* value = field(body, name);
  if (!value) return std::nullopt;
  if (!value->is_string()) invalid(name, std::string("expected a string, got ") + value->type_name());
  return value->get<std::string>();
}

std::optional<int64_t> dimensions(const OrderedJson& body) {
  const OrderedJson* value = field(body, "dimensions");
  if (!value) return std::nullopt;
  if (!value->is_number_integer() || value->get<int64_t>() < 1)
    invalid("dimensions", "expected a positive integer, got " + value->dump());
  return value->get<int64_t>();
}

// A text or a list of texts, at most kMaxInputs.
std::vector<std::string> texts(const OrderedJson& value, const std::string& param) {
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array()) invalid(param, std::string("expected a string or a list of strings, got ") + value.type_name());
  if (value.empty()) invalid(param, "the list is empty: give at least one text");
  if (value.size() > kMaxInputs)
    invalid(param, std::to_string(value.size()) + " texts, more than the " + std::to_string(kMaxInputs) +
                       " a request may hold");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string())
      invalid(param, "item " + std::to_string(i) + " is " + value[i].type_name() + ", not a string");
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

std::vector<int32_t> ids(const OrderedJson& value, const std::string& param) {
  if (value.empty()) invalid(param, "a token id list is empty");
  std::vector<int32_t> out;
  for (const OrderedJson& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      invalid(param, "expected token ids (non-negative integers), got " + id.dump());
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

void reject_unknown(const OrderedJson& body, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : body.items()) {
    bool listed = false;
    for (const char* name : known) listed = listed || key == name;
    if (!listed) invalid(key, "is not a field canrun reads here");
  }
}

}  // namespace

EmbeddingRequest parse_openai_embedding_request(const std::string& body) {
  const OrderedJson json = parse_object(body);
  reject_unknown(json, {"input", "model", "encoding_format", "dimensions", "user"});
  EmbeddingRequest request;
  if (const std::optional<std::string> model = optional_string(json, "model")) request.model = *model;
  const OrderedJson* input = field(json, "input");
  if (!input) invalid("input", "is required");
  const bool id_lists = input->is_array() && !input->empty() && (*input)[0].is_array();
  const bool one_id_list = input->is_array() && !input->empty() && (*input)[0].is_number();
  if (id_lists) {
    if (input->size() > kMaxInputs) invalid("input", "more than " + std::to_string(kMaxInputs) + " inputs");
    for (const OrderedJson& list : *input) {
      if (!list.is_array()) invalid("input", "mixes token id lists with other values");
      request.token_ids.push_back(ids(list, "input"));
    }
  } else if (one_id_list) {
    request.token_ids.push_back(ids(*input, "input"));
  } else {
    request.texts = texts(*input, "input");
  }
  if (const std::optional<std::string> format = optional_string(json, "encoding_format")) {
    if (*format != "float" && *format != "base64")
      invalid("encoding_format", "'" + *format + "' is not one of float, base64");
    request.base64 = *format == "base64";
  }
  request.dimensions = dimensions(json);
  return request;
}

EmbeddingRequest parse_tei_embed_request(const std::string& body) {
  const OrderedJson json = parse_object(body);
  reject_unknown(json, {"inputs", "normalize", "truncate", "truncation_direction", "prompt_name", "dimensions"});
  EmbeddingRequest request;
  const OrderedJson* inputs = field(json, "inputs");
  if (!inputs) invalid("inputs", "is required");
  request.texts = texts(*inputs, "inputs");
  if (field(json, "normalize")) request.normalize = boolean(json, "normalize", true);
  request.truncate = boolean(json, "truncate", false);
  if (const std::optional<std::string> direction = optional_string(json, "truncation_direction");
      direction && *direction != "Right")
    invalid("truncation_direction", "'" + *direction + "' is not supported (supported: Right)");
  request.prompt_name = optional_string(json, "prompt_name");
  request.dimensions = dimensions(json);
  return request;
}

SimilarityRequest parse_similarity_request(const std::string& body) {
  const OrderedJson json = parse_object(body);
  reject_unknown(json, {"inputs", "truncate", "truncation_direction", "prompt_name"});
  const OrderedJson* inputs = field(json, "inputs");
  if (!inputs || !inputs->is_object()) invalid("inputs", "expected {\"source_sentence\": ..., \"sentences\": [...]}");
  SimilarityRequest request;
  const OrderedJson* source = field(*inputs, "source_sentence");
  if (!source || !source->is_string()) invalid("inputs.source_sentence", "expected a string");
  request.source = source->get<std::string>();
  const OrderedJson* sentences = field(*inputs, "sentences");
  if (!sentences) invalid("inputs.sentences", "is required");
  request.sentences = texts(*sentences, "inputs.sentences");
  request.truncate = boolean(json, "truncate", false);
  request.prompt_name = optional_string(json, "prompt_name");
  return request;
}

RerankRequest parse_rerank_request(const std::string& body) {
  const OrderedJson json = parse_object(body);
  reject_unknown(json, {"query", "texts", "raw_scores", "return_text", "truncate", "truncation_direction"});
  RerankRequest request;
  const std::optional<std::string> query = optional_string(json, "query");
  if (!query) invalid("query", "is required");
  request.query = *query;
  const OrderedJson* texts_field = field(json, "texts");
  if (!texts_field) invalid("texts", "is required");
  if (!texts_field->is_array()) invalid("texts", std::string("expected a list of strings, got ") + texts_field->type_name());
  request.texts = texts(*texts_field, "texts");
  request.raw_scores = boolean(json, "raw_scores", false);
  request.return_text = boolean(json, "return_text", false);
  if (!boolean(json, "truncate", true))
    invalid("truncate", "false is not supported: pairs are cut to the model's length, longest first");
  if (const std::optional<std::string> direction = optional_string(json, "truncation_direction");
      direction && *direction != "Right")
    invalid("truncation_direction", "'" + *direction + "' is not supported (supported: Right)");
  return request;
}

TokenizeRequest parse_tokenize_request(const std::string& body) {
  const OrderedJson json = parse_object(body);
  reject_unknown(json, {"inputs", "add_special_tokens"});
  TokenizeRequest request;
  const OrderedJson* inputs = field(json, "inputs");
  if (!inputs) invalid("inputs", "is required");
  request.texts = texts(*inputs, "inputs");
  request.add_special_tokens = boolean(json, "add_special_tokens", true);
  return request;
}

}  // namespace canrun
