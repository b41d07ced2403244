#include "bench/endpoint_client.h"

#include <httplib.h>

#include <chrono>

#include "bench/sse_stream.h"
#include "plan/http_errors.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kCompletions = "/v1/completions";
constexpr std::string_view kChatCompletions = "/v1/chat/completions";

// At most this much of an error body goes into a message.
constexpr size_t kErrorBodyShown = 300;

std::string request_body(const Endpoint& endpoint, const EndpointPrompt& prompt) {
  Json body = {{"model", endpoint.model},
               {"max_tokens", prompt.output_tokens},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"temperature", 0},
               {"ignore_eos", true}};  // vLLM, llama.cpp and TGI read it; a bench runs every token
  if (endpoint.chat)
    body["messages"] = Json::array({{{"role", "user"}, {"content", prompt.text}}});
  else if (prompt.as_text)
    body["prompt"] = prompt.text;
  else
    body["prompt"] = prompt.ids;
  return body.dump();
}

// The server's own words when its error body is OpenAI-style ({"error": {"message": ...}}),
// else the start of the body.
std::string error_text(const std::string& body) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error")) {
    const Json& error = json["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string())
      return error["message"].get<std::string>();
    if (error.is_string()) return error.get<std::string>();
  }
  return body.size() > kErrorBodyShown ? body.substr(0, kErrorBodyShown) + "..." : body;
}

// Reads the chunks of one streamed response into `response`.
class ChunkReader {
 public:
  ChunkReader(StreamedResponse& response, Clock::time_point start) : response_(response), start_(start) {}

  void on_data(const std::string& payload) {
    if (payload == "[DONE]") {
      done_ = true;
      return;
    }
    const Json chunk = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (!chunk.is_object()) {
      fail_once("a streamed chunk is not JSON: " + payload.substr(0, kErrorBodyShown));
      return;
    }
    if (chunk.contains("error")) {
      fail_once("the server reported an error mid-stream: " + error_text(payload));
      return;
    }
    if (chunk.contains("choices") && chunk["choices"].is_array() && !chunk["choices"].empty()) {
      const double now = std::chrono::duration<double>(Clock::now() - start_).count();
      if (chunks_ == 0) response_.first_token_s = now;
      else response_.inter_token_s.push_back(now - response_.latency_s);
      response_.latency_s = now;
      ++chunks_;
    }
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      const Json& usage = chunk["usage"];
      if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer())
        usage_output_ = usage["completion_tokens"].get<int64_t>();
      if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer())
        usage_prompt_ = usage["prompt_tokens"].get<int64_t>();
    }
  }

  void finish(int64_t sent_prompt_tokens) {
    if (!response_.error.empty()) return;
    if (chunks_ == 0) {
      response_.error = "the stream ended before any chunk with a choice";
      return;
    }
    if (!done_) response_.error = "the stream ended without its closing [DONE]";
    response_.output_tokens = usage_output_ >= 0 ? usage_output_ : chunks_;
    response_.prompt_tokens = usage_prompt_ >= 0 ? usage_prompt_ : sent_prompt_tokens;
  }

 private:
  void fail_once(const std::string& message) {
    if (response_.error.empty()) response_.error = message;
  }

  StreamedResponse& response_;
  Clock::time_point start_;
  int64_t chunks_ = 0;
  int64_t usage_output_ = -1, usage_prompt_ = -1;
  bool done_ = false;
};

}  // namespace

Endpoint parse_endpoint(const std::string& url, bool chat) {
  Endpoint endpoint;
  endpoint.url = url;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || (url.compare(0, scheme_end, "http") != 0 &&
                                          url.compare(0, scheme_end, "https") != 0))
    fail(ErrorKind::kUsage, "--endpoint '" + url + "': expected http://HOST[:PORT][/PATH] or https://...");
  const size_t host_start = scheme_end + 3;
  const size_t path_start = std::min(url.find('/', host_start), url.size());
  if (path_start == host_start) fail(ErrorKind::kUsage, "--endpoint '" + url + "': no host");
  endpoint.origin = url.substr(0, path_start);
  std::string path = url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.ends_with(kChatCompletions)) {
    endpoint.chat = true;
  } else if (path.ends_with(kCompletions)) {
    endpoint.chat = false;
  } else {
    if (!path.ends_with("/v1")) path += "/v1";
    path += (chat ? kChatCompletions : kCompletions).substr(3);
    endpoint.chat = chat;
  }
  endpoint.path = path;
  return endpoint;
}

EndpointClient::EndpointClient(const Endpoint& endpoint)
    : endpoint_(endpoint), client_(std::make_unique<httplib::Client>(endpoint.origin)) {
  if (!client_->is_valid()) fail(ErrorKind::kUsage, "--endpoint '" + endpoint.url + "': not a valid URL");
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(endpoint.timeout_s));
  client_->set_connection_timeout(std::chrono::seconds(10));
  client_->set_read_timeout(timeout);
  client_->set_write_timeout(timeout);
  client_->set_keep_alive(true);
  if (!endpoint.api_key.empty()) client_->set_bearer_token_auth(endpoint.api_key.c_str());
}

EndpointClient::~EndpointClient() = default;

std::string EndpointClient::api_root() const {
  const std::string_view route = endpoint_.chat ? kChatCompletions : kCompletions;
  return endpoint_.path.substr(0, endpoint_.path.size() - route.size());
}

std::vector<std::string> EndpointClient::served_models() {
  const std::string path = api_root() + "/v1/models";
  const std::string where = endpoint_.origin + path;
  const httplib::Result result = client_->Get(path);
  if (!result) fail(ErrorKind::kRuntime, where + ": " + describe_http_error(result.error()));
  if (result->status != 200)
    fail(ErrorKind::kRuntime, where + ": HTTP " + std::to_string(result->status) + ": " + error_text(result->body));
  const Json json = Json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> ids;
  if (json.is_object() && json.contains("data") && json["data"].is_array())
    for (const Json& model : json["data"])
      if (model.is_object() && model.contains("id") && model["id"].is_string()) ids.push_back(model["id"]);
  if (ids.empty()) fail(ErrorKind::kRuntime, where + ": lists no model (expected {\"data\": [{\"id\": ...}]})");
  return ids;
}

StreamedResponse EndpointClient::send(const EndpointPrompt& prompt) {
  StreamedResponse response;
  response.requested_tokens = prompt.output_tokens;
  httplib::Request request;
  request.method = "POST";
  request.path = endpoint_.path;
  request.body = request_body(endpoint_, prompt);
  request.set_header("Content-Type", "application/json");
  request.set_header("Accept", "text/event-stream");
  int status = 0;
  std::string error_body;
  const Clock::time_point start = Clock::now();
  ChunkReader reader(response, start);
  SseStream stream([&](const std::string& payload) { reader.on_data(payload); });
  request.response_handler = [&](const httplib::Response& head) {
    status = head.status;
    return true;
  };
  request.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
    if (status != 200) {
      if (error_body.size() < 64 * 1024) error_body.append(data, length);
    } else {
      stream.feed(std::string_view(data, length));
    }
    return true;
  };
  const httplib::Result result = client_->send(request);
  if (!result) {
    response.error = describe_http_error(result.error());
    return response;
  }
  if (status != 200) {
    response.error = "HTTP " + std::to_string(status) + ": " + error_text(error_body);
    return response;
  }
  stream.finish();
  reader.finish(static_cast<int64_t>(prompt.ids.size()));
  return response;
}

EmbeddingsResponse EndpointClient::embed(const std::vector<std::string>& texts) {
  EmbeddingsResponse response;
  const std::string body = Json{{"model", endpoint_.model}, {"input", texts}}.dump();
  const httplib::Result result = client_->Post(api_root() + "/v1/embeddings", body, "application/json");
  if (!result) {
    response.error = describe_http_error(result.error());
    return response;
  }
  if (result->status != 200) {
    response.error = "HTTP " + std::to_string(result->status) + ": " + error_text(result->body);
    return response;
  }
  const Json json = Json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("data") || !json["data"].is_array() || json["data"].size() != texts.size()) {
    response.error = "the response has no embedding for each of the " + std::to_string(texts.size()) +
                     " texts (expected {\"data\": [{\"embedding\": ...}, ...]})";
    return response;
  }
  if (json.contains("usage") && json["usage"].is_object() && json["usage"].contains("prompt_tokens") &&
      json["usage"]["prompt_tokens"].is_number_integer())
    response.tokens = json["usage"]["prompt_tokens"].get<int64_t>();
  return response;
}

}  // namespace canrun
