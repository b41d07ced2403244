// The bodies of an encoder server's routes, read and checked: OpenAI's POST /v1/embeddings and
// text-embeddings-inference's POST /embed, /similarity, /rerank and /tokenize. A wrong field is an
// ApiError(400) naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canrun {

struct EmbeddingRequest {
  std::string model;  // empty: not given (OpenAI's)
  // One of these: texts, or token ids as they are (OpenAI's input as integer lists).
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> token_ids;
  bool base64 = false;                  // encoding_format "base64": little-endian float32, base64
  std::optional<int64_t> dimensions;    // the first N values (renormalised where the model normalises)
  std::optional<bool> normalize;        // TEI's; none: as the model's modules say
  bool truncate = true;                 // false: a text over max_seq_length is a 413 (TEI's default)
  std::optional<std::string> prompt_name;
};

// POST /v1/embeddings: {"input": str | [str] | [int] | [[int]], "model", "encoding_format",
// "dimensions", "user"}.
EmbeddingRequest parse_openai_embedding_request(const std::string& body);
// POST /embed: {"inputs": str | [str], "normalize", "truncate", "truncation_direction" ("Right"),
// "prompt_name", "dimensions"}.
EmbeddingRequest parse_tei_embed_request(const std::string& body);

struct SimilarityRequest {
  std::string source;
  std::vector<std::string> sentences;
  bool truncate = true;
  std::optional<std::string> prompt_name;
};
// POST /similarity: {"inputs": {"source_sentence": str, "sentences": [str]}, "truncate", "prompt_name"}.
SimilarityRequest parse_similarity_request(const std::string& body);

struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;
  bool raw_scores = false;   // the logits, before the model's activation
  bool return_text = false;  // each result with its text
};
// POST /rerank: {"query": str, "texts": [str], "raw_scores", "return_text", "truncate" (only true:
// pairs are cut to the model's length), "truncation_direction" ("Right")}.
RerankRequest parse_rerank_request(const std::string& body);

struct TokenizeRequest {
  std::vector<std::string> texts;
  bool add_special_tokens = true;
};
// POST /tokenize: {"inputs": str | [str], "add_special_tokens"}.
TokenizeRequest parse_tokenize_request(const std::string& body);

// The texts a request may hold at most.
inline constexpr size_t kMaxInputs = 2048;

}  // namespace canrun
