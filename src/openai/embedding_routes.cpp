#include "openai/embedding_routes.h"

#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "openai/api_error.h"
#include "util/error.h"

namespace canrun {
namespace {

// Little-endian float32 values as base64, as OpenAI's encoding_format "base64" sends them.
std::string base64_floats(const float* values, int64_t count) {
  static_assert(std::endian::native == std::endian::little);
  const int bytes = static_cast<int>(count * 4);
  std::string out(static_cast<size_t>(4 * ((bytes + 2) / 3)), '\0');
  EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(values), bytes);
  return out;
}

Json rows(const Embeddings& embeddings) {
  Json out = Json::array();
  for (size_t i = 0; i < embeddings.token_counts.size(); ++i)
    out.push_back(std::vector<float>(embeddings.vectors.begin() + static_cast<int64_t>(i) * embeddings.dimension,
                                     embeddings.vectors.begin() + static_cast<int64_t>(i + 1) * embeddings.dimension));
  return out;
}

int64_t total_tokens(const Embeddings& embeddings) {
  int64_t total = 0;
  for (int64_t count : embeddings.token_counts) total += count;
  return total;
}

}  // namespace

SentenceEncoder& EmbeddingRoutes::embeddings(const std::string& route) const {
  if (!embeddings_)
    throw ApiError(400, route + " needs an embedding model; " + name_ +
                            " is a cross-encoder (a classification head over sentence pairs): use /rerank");
  return *embeddings_;
}

std::vector<PreparedText> EmbeddingRoutes::prepare(const EmbeddingRequest& request, const std::string& param,
                                                   bool normalize) const {
  std::vector<PreparedText> texts;
  if (!request.token_ids.empty()) {
    const int64_t vocab = embeddings_->session().spec().vocab_size, limit = embeddings_->config().max_seq_length;
    for (const std::vector<int32_t>& ids : request.token_ids) {
      for (const int32_t id : ids)
        if (id >= vocab)
          throw ApiError(400, param + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                                  std::to_string(vocab), param);
      if (static_cast<int64_t>(ids.size()) > limit)
        throw ApiError(400, param + ": " + std::to_string(ids.size()) + " token ids, over the model's max_seq_length of " +
                                std::to_string(limit), param);
      texts.push_back({ids, 0, normalize});
    }
    return texts;
  }
  EmbedOptions options;
  options.prompt_name = request.prompt_name;
  options.truncate = request.truncate;
  try {
    texts = embeddings_->prepare(request.texts, options);
  } catch (const Error& e) {
    throw ApiError(400, param + ": " + e.what(), param);
  }
  for (PreparedText& text : texts) text.normalize = normalize;
  return texts;
}

namespace {

// The answer of a request waiting in the service's queue, by its deadline.
template <typename Answer>
Answer await(std::optional<std::future<Answer>> result, EmbeddingRoutes::Clock::time_point deadline) {
  if (!result) throw ApiError(429, "the server is busy: every queue place is taken (--max-queue); retry later");
  if (result->wait_until(deadline) != std::future_status::ready)
    throw ApiError(504, "the request took longer than its deadline (--request-timeout)");
  try {
    return result->get();
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw ApiError(e.kind() == ErrorKind::kUsage ? 400 : 500, e.what());
  } catch (const std::exception& e) {
    throw ApiError(500, e.what());
  }
}

}  // namespace

Embeddings EmbeddingRoutes::run(std::vector<PreparedText> texts, Clock::time_point deadline) {
  return await(service_.submit(std::move(texts)), deadline);
}

void EmbeddingRoutes::shorten(Embeddings& embeddings, int64_t dimensions, bool normalized) const {
  if (dimensions > embeddings.dimension)
    throw ApiError(400, "dimensions: " + std::to_string(dimensions) + " is more than the model's " +
                            std::to_string(embeddings.dimension), "dimensions");
  if (dimensions == embeddings.dimension) return;
  std::vector<float> kept;
  for (size_t i = 0; i < embeddings.token_counts.size(); ++i) {
    const float* row = embeddings.vectors.data() + static_cast<int64_t>(i) * embeddings.dimension;
    double norm = 0;
    for (int64_t d = 0; d < dimensions; ++d) norm += static_cast<double>(row[d]) * row[d];
    const double scale = normalized ? 1.0 / std::max(std::sqrt(norm), 1e-12) : 1.0;
    for (int64_t d = 0; d < dimensions; ++d) kept.push_back(static_cast<float>(row[d] * scale));
  }
  embeddings.vectors = std::move(kept);
  embeddings.dimension = dimensions;
}

Json EmbeddingRoutes::openai_embeddings(const std::string& body, Clock::time_point deadline) {
  const bool normalize = embeddings("/v1/embeddings").config().normalize;
  const EmbeddingRequest request = parse_openai_embedding_request(body);
  if (!request.model.empty() && request.model != name_)
    throw ApiError(404, "The model `" + request.model + "` does not exist (this server serves `" + name_ + "`)",
                   "model", "model_not_found");
  Embeddings embeddings = run(prepare(request, "input", normalize), deadline);
  if (request.dimensions) shorten(embeddings, *request.dimensions, normalize);
  Json data = Json::array();
  for (size_t i = 0; i < embeddings.token_counts.size(); ++i) {
    const float* row = embeddings.vectors.data() + static_cast<int64_t>(i) * embeddings.dimension;
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", request.base64 ? Json(base64_floats(row, embeddings.dimension))
                                                 : Json(std::vector<float>(row, row + embeddings.dimension))}});
  }
  const int64_t tokens = total_tokens(embeddings);
  return {{"object", "list"}, {"data", data}, {"model", name_},
          {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
}

Json EmbeddingRoutes::tei_embed(const std::string& body, Clock::time_point deadline) {
  embeddings("/embed");
  const EmbeddingRequest request = parse_tei_embed_request(body);
  const bool normalize = request.normalize.value_or(true);
  Embeddings embeddings = run(prepare(request, "inputs", normalize), deadline);
  if (request.dimensions) shorten(embeddings, *request.dimensions, normalize);
  return rows(embeddings);
}

Json EmbeddingRoutes::similarity(const std::string& body, Clock::time_point deadline) {
  embeddings("/similarity");
  const SimilarityRequest request = parse_similarity_request(body);
  EmbeddingRequest texts;
  texts.texts.push_back(request.source);
  texts.texts.insert(texts.texts.end(), request.sentences.begin(), request.sentences.end());
  texts.truncate = request.truncate;
  texts.prompt_name = request.prompt_name;
  const Embeddings embeddings = run(prepare(texts, "inputs", /*normalize=*/true), deadline);
  // Unit vectors: the cosine similarity is the dot product.
  Json scores = Json::array();
  const float* source = embeddings.vectors.data();
  for (size_t i = 1; i < embeddings.token_counts.size(); ++i) {
    const float* other = source + static_cast<int64_t>(i) * embeddings.dimension;
    double dot = 0;
    for (int64_t d = 0; d < embeddings.dimension; ++d) dot += static_cast<double>(source[d]) * other[d];
    scores.push_back(static_cast<float>(dot));
  }
  return scores;
}

Json EmbeddingRoutes::rerank(const std::string& body, Clock::time_point deadline) {
  if (!cross_)
    throw ApiError(400, "/rerank needs a cross-encoder (a *ForSequenceClassification head over sentence pairs); " +
                            name_ + " has no classification head");
  const RerankRequest request = parse_rerank_request(body);
  CrossEncoder& cross = *cross_;
  // The scores run on the engine thread, between the queue's other work.
  return await(service_.submit([&cross, request]() {
    Json ranked = Json::array();
    for (const RankedDocument& document : cross.rank(request.query, request.texts, request.raw_scores)) {
      Json entry{{"index", document.index}, {"score", document.scores[0]}};
      if (request.return_text) entry["text"] = request.texts[static_cast<size_t>(document.index)];
      ranked.push_back(entry);
    }
    return ranked;
  }), deadline);
}

Json EmbeddingRoutes::tokenize(const Tokenizer& tokenizer, const std::string& body) {
  const TokenizeRequest request = parse_tokenize_request(body);
  Json out = Json::array();
  for (const std::string& text : request.texts) {
    const Tokenizer::Encoding encoding = tokenizer.encode(text, request.add_special_tokens);
    Json tokens = Json::array();
    for (size_t i = 0; i < encoding.ids.size(); ++i)
      tokens.push_back({{"id", encoding.ids[i]}, {"text", encoding.tokens[i]}, {"special", tokenizer.is_special(encoding.ids[i])}});
    out.push_back(tokens);
  }
  return out;
}

}  // namespace canrun
