// What an encoder server answers: OpenAI's POST /v1/embeddings and text-embeddings-inference's
// POST /embed, /similarity (a sentence-transformers model) and /rerank (a cross-encoder), and
// /tokenize, each from a request body to the JSON reply, through the encoder service's queue.
// Every mistake is an ApiError (400 naming the field or the route the model lacks, 429 when the
// queue is full, 504 past the deadline).
#pragma once

#include <chrono>
#include <string>

#include "embed/cross_encoder.h"
#include "embed/sentence_model.h"
#include "openai/embedding_request.h"
#include "openai/encoder_service.h"
#include "util/json.h"

namespace canrun {

class EmbeddingRoutes {
 public:
  using Clock = std::chrono::steady_clock;
  // One of `embeddings` and `cross` is the model's, the other null.
  EmbeddingRoutes(SentenceEncoder* embeddings, CrossEncoder* cross, EncoderService& service, std::string served_name)
      : embeddings_(embeddings), cross_(cross), service_(service), name_(std::move(served_name)) {}

  Json openai_embeddings(const std::string& body, Clock::time_point deadline);
  Json tei_embed(const std::string& body, Clock::time_point deadline);
  Json similarity(const std::string& body, Clock::time_point deadline);
  Json rerank(const std::string& body, Clock::time_point deadline);
  // Also for a model that generates text: it has a tokenizer too.
  static Json tokenize(const Tokenizer& tokenizer, const std::string& body);

 private:
  // The texts (or token ids) of `request` prepared as the pipeline runs them; `normalize` set.
  std::vector<PreparedText> prepare(const EmbeddingRequest& request, const std::string& param, bool normalize) const;
  Embeddings run(std::vector<PreparedText> texts, Clock::time_point deadline);
  // The sentence-transformers pipeline; a cross-encoder's server answers 400 naming `route`.
  SentenceEncoder& embeddings(const std::string& route) const;
  // Keeps the first `dimensions` values of each vector, L2-normalised again where they were.
  void shorten(Embeddings& embeddings, int64_t dimensions, bool normalized) const;

  SentenceEncoder* embeddings_;
  CrossEncoder* cross_;
  EncoderService& service_;
  std::string name_;
};

}  // namespace canrun
