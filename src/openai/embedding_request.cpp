#include "openai/embedding_request.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"
#include "openai/request_body.h"

namespace canrun {
namespace {

bool boolean(const OrderedJson& body, const char* name, bool fallback) {
  const OrderedJson* value = request_field(body, name);
  if (!value) return fallback;
  if (!value->is_boolean()) invalid_param(name, std::string("expected true or false, got ") + value->type_name());
  return value->get<bool>();
}

std::optional<std::string> optional_string(const OrderedJson& body, const char* name) {
  const OrderedJson* value = request_field(body, name);
  if (!value) return std::nullopt;
  if (!value->is_string()) invalid_param(name, std::string("expected a string, got ") + value->type_name());
  return value->get<std::string>();
}

std::optional<int64_t> dimensions(const OrderedJson& body) {
  const OrderedJson* value = request_field(body, "dimensions");
  if (!value) return std::nullopt;
  if (!value->is_number_integer() || value->get<int64_t>() < 1)
    invalid_param("dimensions", "expected a positive integer, got " + value->dump());
  return value->get<int64_t>();
}

// A text or a list of texts, at most kMaxInputs.
std::vector<std::string> texts(const OrderedJson& value, const std::string& param) {
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array()) invalid_param(param, std::string("expected a string or a list of strings, got ") + value.type_name());
  if (value.empty()) invalid_param(param, "the list is empty: give at least one text");
  if (value.size() > kMaxInputs)
    invalid_param(param, std::to_string(value.size()) + " texts, more than the " + std::to_string(kMaxInputs) +
                       " a request may hold");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string())
      invalid_param(param, "item " + std::to_string(i) + " is " + value[i].type_name() + ", not a string");
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

std::vector<int32_t> ids(const OrderedJson& value, const std::string& param) {
  if (value.empty()) invalid_param(param, "a token id list is empty");
  std::vector<int32_t> out;
  for (const OrderedJson& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      invalid_param(param, "expected token ids (non-negative integers), got " + id.dump());
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

void reject_unknown(const OrderedJson& body, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : body.items()) {
    bool listed = false;
    for (const char* name : known) listed = listed || key == name;
    if (!listed) invalid_param(key, "is not a field canrun reads here");
  }
}

}  // namespace

EmbeddingRequest parse_openai_embedding_request(const std::string& body) {
  const OrderedJson json = parse_request_object(body);
  reject_unknown(json, {"input", "model", "encoding_format", "dimensions", "user"});
  EmbeddingRequest request;
  if (const std::optional<std::string> model = optional_string(json, "model")) request.model = *model;
  const OrderedJson* input = request_field(json, "input");
  if (!input) invalid_param("input", "is required");
  const bool id_lists = input->is_array() && !input->empty() && (*input)[0].is_array();
  const bool one_id_list = input->is_array() && !input->empty() && (*input)[0].is_number();
  if (id_lists) {
    if (input->size() > kMaxInputs) invalid_param("input", "more than " + std::to_string(kMaxInputs) + " inputs");
    for (const OrderedJson& list : *input) {
      if (!list.is_array()) invalid_param("input", "mixes token id lists with other values");
      request.token_ids.push_back(ids(list, "input"));
    }
  } else if (one_id_list) {
    request.token_ids.push_back(ids(*input, "input"));
  } else {
    request.texts = texts(*input, "input");
  }
  if (const std::optional<std::string> format = optional_string(json, "encoding_format")) {
    if (*format != "float" && *format != "base64")
      invalid_param("encoding_format", "'" + *format + "' is not one of float, base64");
    request.base64 = *format == "base64";
  }
  request.dimensions = dimensions(json);
  return request;
}

EmbeddingRequest parse_tei_embed_request(const std::string& body) {
  const OrderedJson json = parse_request_object(body);
  reject_unknown(json, {"inputs", "normalize", "truncate", "truncation_direction", "prompt_name", "dimensions"});
  EmbeddingRequest request;
  const OrderedJson* inputs = request_field(json, "inputs");
  if (!inputs) invalid_param("inputs", "is required");
  request.texts = texts(*inputs, "inputs");
  if (request_field(json, "normalize")) request.normalize = boolean(json, "normalize", true);
  request.truncate = boolean(json, "truncate", false);
  if (const std::optional<std::string> direction = optional_string(json, "truncation_direction");
      direction && *direction != "Right")
    invalid_param("truncation_direction", "'" + *direction + "' is not supported (supported: Right)");
  request.prompt_name = optional_string(json, "prompt_name");
  request.dimensions = dimensions(json);
  return request;
}

SimilarityRequest parse_similarity_request(const std::string& body) {
  const OrderedJson json = parse_request_object(body);
  reject_unknown(json, {"inputs", "truncate", "truncation_direction", "prompt_name"});
  const OrderedJson* inputs = request_field(json, "inputs");
  if (!inputs || !inputs->is_object()) invalid_param("inputs", "expected {\"source_sentence\": ..., \"sentences\": [...]}");
  SimilarityRequest request;
  const OrderedJson* source = request_field(*inputs, "source_sentence");
  if (!source || !source->is_string()) invalid_param("inputs.source_sentence", "expected a string");
  request.source = source->get<std::string>();
  const OrderedJson* sentences = request_field(*inputs, "sentences");
  if (!sentences) invalid_param("inputs.sentences", "is required");
  request.sentences = texts(*sentences, "inputs.sentences");
  request.truncate = boolean(json, "truncate", false);
  request.prompt_name = optional_string(json, "prompt_name");
  return request;
}

RerankRequest parse_rerank_request(const std::string& body) {
  const OrderedJson json = parse_request_object(body);
  reject_unknown(json, {"query", "texts", "raw_scores", "return_text", "truncate", "truncation_direction"});
  RerankRequest request;
  const std::optional<std::string> query = optional_string(json, "query");
  if (!query) invalid_param("query", "is required");
  request.query = *query;
  const OrderedJson* texts_field = request_field(json, "texts");
  if (!texts_field) invalid_param("texts", "is required");
  if (!texts_field->is_array()) invalid_param("texts", std::string("expected a list of strings, got ") + texts_field->type_name());
  request.texts = texts(*texts_field, "texts");
  request.raw_scores = boolean(json, "raw_scores", false);
  request.return_text = boolean(json, "return_text", false);
  if (!boolean(json, "truncate", true))
    invalid_param("truncate", "false is not supported: pairs are cut to the model's length, longest first");
  if (const std::optional<std::string> direction = optional_string(json, "truncation_direction");
      direction && *direction != "Right")
    invalid_param("truncation_direction", "'" + *direction + "' is not supported (supported: Right)");
  return request;
}

TokenizeRequest parse_tokenize_request(const std::string& body) {
  const OrderedJson json = parse_request_object(body);
  reject_unknown(json, {"inputs", "add_special_tokens"});
  TokenizeRequest request;
  const OrderedJson* inputs = request_field(json, "inputs");
  if (!inputs) invalid_param("inputs", "is required");
  request.texts = texts(*inputs, "inputs");
  request.add_special_tokens = boolean(json, "add_special_tokens", true);
  return request;
}

}  // namespace canrun
