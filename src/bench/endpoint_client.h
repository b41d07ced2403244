// One streamed request to an OpenAI-compatible server (canrun's, llama.cpp's llama-server, vLLM,
// TGI, ...), timed as vLLM's `bench serve` times it: the first chunk that carries a choice is the
// first token; the gaps between such chunks are the inter-token latencies; the last one ends it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace httplib {
class Client;
}

namespace canrun {

struct Endpoint {
  std::string url;      // as given, for messages
  std::string origin;   // scheme://host[:port]
  std::string path;     // the route requests go to: .../v1/completions or .../v1/chat/completions
  bool chat = false;    // chat messages rather than a prompt
  std::string model;    // the request's "model"
  std::string api_key;  // sent as "Authorization: Bearer" when not empty
  double timeout_s = 600;
};

// `url`: scheme://host[:port][/prefix]. A URL ending in /v1/completions or /v1/chat/completions
// names its route (and the API); otherwise the route of `chat` is added to the prefix
// (/v1 is added when the prefix does not end in it). Throws Error(kUsage) naming the URL.
Endpoint parse_endpoint(const std::string& url, bool chat);

struct EndpointPrompt {
  std::vector<int32_t> ids;  // sent as the prompt's token ids, unless `as_text`
  std::string text;          // the ids decoded: what a chat request or `as_text` sends
  bool as_text = false;
  int64_t output_tokens = 0;  // max_tokens, with ignore_eos so that the server runs them all
};

struct StreamedResponse {
  int64_t prompt_tokens = 0;  // the server's usage count when it reports one, else the ids drawn
  int64_t output_tokens = 0;  // usage.completion_tokens when reported, else the chunks with a choice
  int64_t requested_tokens = 0;  // max_tokens: a server may stop early (at eos, or cut off)
  double first_token_s = 0;   // from sending the request
  double latency_s = 0;       // from sending the request to the last chunk with a choice
  std::vector<double> inter_token_s;
  std::string error;  // empty: it completed
};

// One /v1/embeddings request: the texts' tokens as the server counted them (usage.prompt_tokens,
// 0 when it reports none), or what failed.
struct EmbeddingsResponse {
  int64_t tokens = 0;
  std::string error;  // empty: every text has its embedding
};

// A connection to one endpoint (kept alive between requests); one per thread.
class EndpointClient {
 public:
  explicit EndpointClient(const Endpoint& endpoint);
  ~EndpointClient();

  // The model ids of the server's /v1/models. Throws Error(kRuntime) saying what failed.
  std::vector<std::string> served_models();
  // Never throws: what failed is the response's error.
  StreamedResponse send(const EndpointPrompt& prompt);
  // The texts' embeddings from the endpoint's /v1/embeddings, beside its completions route.
  // Never throws: what failed is the response's error.
  EmbeddingsResponse embed(const std::vector<std::string>& texts);

 private:
  // The path before /v1/...: "" for http://host:port, "/prefix" for http://host/prefix/v1.
  std::string api_root() const;

  const Endpoint& endpoint_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace canrun
