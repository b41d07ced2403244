#include "openai/generation_service.h"

#include <omp.h>

#include <algorithm>

#include "openai/stop_strings.h"
#include "tokenizer/text_stream.h"
#include "util/error.h"

namespace canrun {
namespace {

double seconds_between(ServerClock::time_point start, ServerClock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

JobOutput Job::wait(ServerClock::time_point deadline) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] { return finished_ || !text_.empty(); });
  JobOutput out = finished_ ? end_ : JobOutput{};
  out.text.swap(text_);
  return out;
}

void Job::publish(const std::string& text) {
  if (text.empty()) return;
  {
    const std::lock_guard lock(mutex_);
    text_ += text;
  }
  changed_.notify_all();
}

void Job::finish(JobOutput end) {
  {
    const std::lock_guard lock(mutex_);
    end_ = std::move(end);
    end_.finished = true;
    finished_ = true;
  }
  changed_.notify_all();
}

GenerationService::GenerationService(Session& session, const Tokenizer& tokenizer, ServerMetrics& metrics, int slots,
                                     int64_t max_queue, int threads)
    : session_(session), tokenizer_(tokenizer), metrics_(metrics), max_queue_(max_queue) {
  const int each = std::max(1, threads / std::max(1, slots));
  for (int i = 0; i < slots; ++i) slots_.emplace_back([this, each] { run_slot(each); });
}

GenerationService::~GenerationService() {
  std::deque<std::shared_ptr<Job>> waiting;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting.swap(queue_);
  }
  wake_.notify_all();
  for (const std::shared_ptr<Job>& job : waiting) {
    JobOutput end;
    end.error_status = 503;
    end.error = "the server is shutting down";
    job->finish(end);
  }
  for (std::thread& slot : slots_) slot.join();
}

std::shared_ptr<Job> GenerationService::submit(GenerationJob job) {
  auto shared = std::make_shared<Job>();
  shared->job_ = std::move(job);
  {
    const std::lock_guard lock(mutex_);
    // Waiting jobs beyond the free slots count against the queue.
    const int64_t free_slots = static_cast<int64_t>(slots_.size()) - running_;
    if (stopping_ || static_cast<int64_t>(queue_.size()) >= max_queue_ + free_slots) return nullptr;
    queue_.push_back(shared);
  }
  wake_.notify_one();
  return shared;
}

int64_t GenerationService::queued() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void GenerationService::run_slot(int threads) {
  omp_set_num_threads(threads);  // this thread's own OpenMP setting
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    run(*job);
    --running_;
  }
}

void GenerationService::run(Job& job) {
  const GenerationJob& spec = job.job_;
  JobOutput end;
  end.prompt_tokens = static_cast<int64_t>(spec.prompt.size());
  if (job.cancelled()) {  // its reader left while it waited
    metrics_.cancelled();
    job.finish(end);
    return;
  }
  TextStream stream(tokenizer_);
  StopStringFilter filter(spec.stop);
  GenerateRequest request;
  request.max_new_tokens = spec.max_tokens;
  request.sampling = spec.sampling;
  if (spec.ignore_eos) request.eos_token_ids = std::vector<int32_t>{};
  ServerClock::time_point previous = spec.arrival;
  int64_t generated = 0;
  request.on_token = [&](int32_t id) {
    const ServerClock::time_point now = ServerClock::now();
    if (generated++ == 0) metrics_.first_token(seconds_between(spec.arrival, now));
    else metrics_.next_token(seconds_between(previous, now));
    previous = now;
    metrics_.tokens_generated(1, now);
    job.publish(filter.push(stream.push(id)));
  };
  request.should_stop = [&] { return filter.stopped() || job.cancelled(); };
  try {
    const GenerationResult result = session_.generate(spec.prompt, request);
    metrics_.prompt_processed(end.prompt_tokens);
    job.publish(filter.push(stream.finish()));
    job.publish(filter.finish());
    end.completion_tokens = static_cast<int64_t>(result.tokens.size());
    end.finish_reason = filter.stopped() || result.stopped_at_eos ? "stop" : "length";
    const bool cut_short = !filter.stopped() && !result.stopped_at_eos && end.completion_tokens < spec.max_tokens;
    if (job.cancelled() && cut_short) metrics_.cancelled();
  } catch (const Error& e) {
    end.error_status = e.kind() == ErrorKind::kUsage ? 400 : 500;
    end.error = e.what();
  } catch (const std::exception& e) {
    end.error_status = 500;
    end.error = e.what();
  }
  job.finish(end);
}

}  // namespace canrun
