// An encoder server's engine side. Embedding requests' texts (tokenized by the request threads)
// wait in a bounded queue; one engine thread (run's caller) takes as many waiting requests as a
// token budget holds, embeds all their texts in one unpadded batch (the weight products read
// their weights once for every text) and hands each request its rows. Other work for the engine
// (a cross-encoder's scores) waits in the same queue and runs alone, in arrival order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "embed/sentence_model.h"
#include "util/json.h"

namespace canrun {

class EncoderService {
 public:
  // `embeddings` (null: a server that embeds nothing) runs at most `batch_tokens` tokens per batch
  // (a longer request runs alone); at most `max_queue` requests wait.
  EncoderService(SentenceEncoder* embeddings, int64_t batch_tokens, int64_t max_queue, int threads);
  ~EncoderService() { stop(); }

  // The engine: runs on the calling thread (the one that loaded the session, for its OpenMP
  // threads) until stop(). Waiting requests end with an error then.
  void run();
  void stop();

  // The request's embeddings to come; none when the queue is full or the service stops. The
  // future throws what the batch threw.
  std::optional<std::future<Embeddings>> submit(std::vector<PreparedText> texts);
  // `task` run on the engine thread; none when the queue is full or the service stops.
  std::optional<std::future<Json>> submit(std::function<Json()> task);
  int64_t queued() const;

 private:
  struct Request {
    std::vector<PreparedText> texts;  // an embedding request's
    std::promise<Embeddings> embeddings;
    std::function<Json()> task;  // or another task's
    std::promise<Json> answer;
  };
  bool enqueue(std::unique_ptr<Request> request);
  void embed_batch(std::vector<std::unique_ptr<Request>>& batch);

  SentenceEncoder* embeddings_;
  const int64_t batch_tokens_;
  const int64_t max_queue_;
  const int threads_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Request>> queue_;
  bool stopping_ = false;
};

}  // namespace canrun
