#include "openai/encoder_service.h"

#include <omp.h>

#include <stdexcept>

namespace canrun {
namespace {

int64_t tokens_of(const std::vector<PreparedText>& texts) {
  int64_t tokens = 0;
  for (const PreparedText& text : texts) tokens += static_cast<int64_t>(text.ids.size());
  return tokens;
}

}  // namespace

EncoderService::EncoderService(SentenceEncoder* embeddings, int64_t batch_tokens, int64_t max_queue, int threads)
    : embeddings_(embeddings), batch_tokens_(batch_tokens), max_queue_(max_queue), threads_(threads) {}

void EncoderService::stop() {
  std::deque<std::unique_ptr<Request>> waiting;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting.swap(queue_);
  }
  wake_.notify_all();
  const auto stopped = std::make_exception_ptr(std::runtime_error("the server is shutting down"));
  for (const std::unique_ptr<Request>& request : waiting) {
    if (request->task) request->answer.set_exception(stopped);
    else request->embeddings.set_exception(stopped);
  }
}

bool EncoderService::enqueue(std::unique_ptr<Request> request) {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || static_cast<int64_t>(queue_.size()) >= max_queue_) return false;
    queue_.push_back(std::move(request));
  }
  wake_.notify_one();
  return true;
}

std::optional<std::future<Embeddings>> EncoderService::submit(std::vector<PreparedText> texts) {
  auto request = std::make_unique<Request>();
  request->texts = std::move(texts);
  std::future<Embeddings> result = request->embeddings.get_future();
  if (!enqueue(std::move(request))) return std::nullopt;
  return result;
}

std::optional<std::future<Json>> EncoderService::submit(std::function<Json()> task) {
  auto request = std::make_unique<Request>();
  request->task = std::move(task);
  std::future<Json> result = request->answer.get_future();
  if (!enqueue(std::move(request))) return std::nullopt;
  return result;
}

int64_t EncoderService::queued() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void EncoderService::run() {
  omp_set_num_threads(threads_);
  for (;;) {
    std::vector<std::unique_ptr<Request>> batch;
    std::unique_ptr<Request> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      if (queue_.front()->task) {
        task = std::move(queue_.front());
        queue_.pop_front();
      } else {
        // Whole embedding requests in arrival order while the budget holds them, the first whatever its size.
        int64_t tokens = 0;
        while (!queue_.empty() && !queue_.front()->task &&
               (batch.empty() || tokens + tokens_of(queue_.front()->texts) <= batch_tokens_)) {
          tokens += tokens_of(queue_.front()->texts);
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
    }
    if (task) {
      try {
        task->answer.set_value(task->task());
      } catch (...) {
        task->answer.set_exception(std::current_exception());
      }
    } else {
      embed_batch(batch);
    }
  }
}

void EncoderService::embed_batch(std::vector<std::unique_ptr<Request>>& batch) {
  std::vector<PreparedText> texts;
  for (const std::unique_ptr<Request>& request : batch)
    texts.insert(texts.end(), request->texts.begin(), request->texts.end());
  try {
    if (!embeddings_) throw std::logic_error("this server embeds nothing");
    const Embeddings all = embeddings_->embed_prepared(texts, batch_tokens_);
    size_t first = 0;
    for (const std::unique_ptr<Request>& request : batch) {
      const size_t count = request->texts.size();
      Embeddings own;
      own.dimension = all.dimension;
      own.forward_passes = all.forward_passes;
      own.vectors.assign(all.vectors.begin() + static_cast<int64_t>(first) * all.dimension,
                         all.vectors.begin() + static_cast<int64_t>(first + count) * all.dimension);
      own.token_counts.assign(all.token_counts.begin() + static_cast<int64_t>(first),
                              all.token_counts.begin() + static_cast<int64_t>(first + count));
      request->embeddings.set_value(std::move(own));
      first += count;
    }
  } catch (...) {
    for (const std::unique_ptr<Request>& request : batch) request->embeddings.set_exception(std::current_exception());
  }
}

}  // namespace canrun
