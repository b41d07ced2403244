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

JobOutput failed(int status, const std::string& message) {
  JobOutput end;
  end.error_status = status;
  end.error = message;
  return end;
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

// A running job: its generation and what turns its tokens into text.
struct GenerationService::Sequence {
  std::shared_ptr<Job> job;
  TextStream stream;
  StopStringFilter filter;
  ServerClock::time_point previous;
  int64_t generated = 0;
  std::unique_ptr<SequenceRun> run;

  Sequence(std::shared_ptr<Job> job, const Tokenizer& tokenizer)
      : job(std::move(job)), stream(tokenizer), filter(this->job->job_.stop), previous(this->job->job_.arrival) {}
};

GenerationService::GenerationService(Session& session, const Tokenizer& tokenizer, ServerMetrics& metrics, int slots,
                                     int64_t max_queue, int64_t prefill_chunk, PromptLookup prompt_lookup,
                                     int threads)
    : session_(session), tokenizer_(tokenizer), metrics_(metrics), slots_(slots), max_queue_(max_queue),
      prefill_chunk_(slots > 1 ? prefill_chunk : 0), prompt_lookup_(prompt_lookup), threads_(threads) {}

void GenerationService::stop() {
  std::deque<std::shared_ptr<Job>> waiting;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting.swap(queue_);
  }
  wake_.notify_all();
  for (const std::shared_ptr<Job>& job : waiting) job->finish(failed(503, "the server is shutting down"));
}

std::shared_ptr<Job> GenerationService::submit(GenerationJob job) {
  auto shared = std::make_shared<Job>();
  shared->job_ = std::move(job);
  {
    const std::lock_guard lock(mutex_);
    // Waiting jobs beyond the free slots count against the queue.
    const int64_t free_slots = slots_ - running_;
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

void GenerationService::run() {
  omp_set_num_threads(threads_);
  std::vector<std::unique_ptr<Sequence>> running;
  for (;;) {
    std::vector<std::shared_ptr<Job>> joining;
    {
      std::unique_lock lock(mutex_);
      if (running.empty()) wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (running.empty() && queue_.empty()) return;  // stopping, nothing left
      while (static_cast<int64_t>(running.size() + joining.size()) < slots_ && !queue_.empty()) {
        joining.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      running_ = static_cast<int64_t>(running.size() + joining.size());
    }
    // Newcomers join the batch: their prompts run at once here, or in pieces, one piece per step,
    // in the batch's steps.
    for (std::shared_ptr<Job>& job : joining)
      if (std::unique_ptr<Sequence> sequence = start(std::move(job))) running.push_back(std::move(sequence));
    std::vector<SequenceRun*> runs;
    for (const auto& sequence : running) runs.push_back(sequence->run.get());
    if (!runs.empty()) {
      metrics_.decode_step(static_cast<int64_t>(runs.size()));
      try {
        session_.step_batch(runs);
      } catch (const std::exception& e) {
        for (const auto& sequence : running) sequence->job->finish(failed(500, e.what()));
        running.clear();
      }
    }
    std::erase_if(running, [&](const std::unique_ptr<Sequence>& sequence) {
      if (!sequence->run->ended()) return false;
      finish(*sequence);
      return true;
    });
    running_ = static_cast<int64_t>(running.size());
  }
}

std::unique_ptr<GenerationService::Sequence> GenerationService::start(std::shared_ptr<Job> job) {
  auto sequence = std::make_unique<Sequence>(std::move(job), tokenizer_);
  Sequence& s = *sequence;
  const GenerationJob& spec = s.job->job_;
  if (s.job->cancelled()) {  // its reader left while it waited
    metrics_.cancelled();
    JobOutput end;
    end.prompt_tokens = static_cast<int64_t>(spec.prompt.size());
    s.job->finish(end);
    return nullptr;
  }
  GenerateRequest request;
  request.max_new_tokens = spec.max_tokens;
  request.sampling = spec.sampling;
  request.prefill_chunk = prefill_chunk_;
  request.prompt_lookup = prompt_lookup_;
  if (spec.ignore_eos) request.eos_token_ids = std::vector<int32_t>{};
  request.on_token = [this, &s](int32_t id) {
    const ServerClock::time_point now = ServerClock::now();
    if (s.generated++ == 0) metrics_.first_token(seconds_between(s.job->job_.arrival, now));
    else metrics_.next_token(seconds_between(s.previous, now));
    s.previous = now;
    metrics_.tokens_generated(1, now);
    s.job->publish(s.filter.push(s.stream.push(id)));
  };
  request.should_stop = [&s] { return s.filter.stopped() || s.job->cancelled(); };
  try {
    s.run = session_.start(spec.prompt, request);
    metrics_.prompt_processed(static_cast<int64_t>(spec.prompt.size()));
  } catch (const Error& e) {
    s.job->finish(failed(e.kind() == ErrorKind::kUsage ? 400 : 500, e.what()));
    return nullptr;
  } catch (const std::exception& e) {
    s.job->finish(failed(500, e.what()));
    return nullptr;
  }
  if (s.run->ended()) {
    finish(s);
    return nullptr;
  }
  return sequence;
}

void GenerationService::finish(Sequence& s) {
  const GenerationJob& spec = s.job->job_;
  const GenerationResult& result = s.run->result();
  s.job->publish(s.filter.push(s.stream.finish()));
  s.job->publish(s.filter.finish());
  JobOutput end;
  end.prompt_tokens = static_cast<int64_t>(spec.prompt.size());
  end.completion_tokens = static_cast<int64_t>(result.tokens.size());
  end.finish_reason = s.filter.stopped() || result.stopped_at_eos ? "stop" : "length";
  const bool cut_short = !s.filter.stopped() && !result.stopped_at_eos && end.completion_tokens < spec.max_tokens;
  if (s.job->cancelled() && cut_short) metrics_.cancelled();
  s.job->finish(end);
}

}  // namespace canrun
