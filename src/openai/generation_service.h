// The model server's engine side: jobs wait in a bounded queue for one of a fixed number of
// sequence slots; one engine thread (run's caller) decodes every running sequence together, a
// token each per step (continuous batching: a newcomer's prompt runs in pieces between the others'
// steps, a finished one leaves between steps), and hands each one's text on as it is decoded,
// ending at a stop string, at max_tokens, at an end-of-sequence token or when its reader cancels it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "openai/server_metrics.h"
#include "runtime/sampling.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace canrun {

using ServerClock = std::chrono::steady_clock;

struct GenerationJob {
  std::vector<int32_t> prompt;
  int64_t max_tokens = 16;
  SamplingParams sampling;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  ServerClock::time_point arrival = ServerClock::now();
};

// What a job's reader gets from one wait: the text since the last, and the end when it came.
struct JobOutput {
  std::string text;
  bool finished = false;
  std::string finish_reason;  // "stop" (a stop string or end of sequence) or "length"
  int error_status = 0;       // finished by an error: its HTTP status and message
  std::string error;
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

class GenerationService;

// One job, shared by its reader (the HTTP handler) and the slot that runs it.
class Job {
 public:
  // Waits until there is new text or the end, or until `deadline`.
  JobOutput wait(ServerClock::time_point deadline);
  // The reader is gone or out of time: the generation stops after its next token.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  friend class GenerationService;
  void publish(const std::string& text);
  void finish(JobOutput end);

  GenerationJob job_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;  // not yet read
  bool finished_ = false;
  JobOutput end_;
  std::atomic<bool> cancelled_ = false;
};

class GenerationService {
 public:
  // `slots` sequences decode together on `threads` threads; at most `max_queue` jobs wait. With
  // more than one slot a newcomer's prompt runs `prefill_chunk` tokens per step (0: all at once).
  // `prompt_lookup` drafts tokens for a sequence while it decodes alone.
  GenerationService(Session& session, const Tokenizer& tokenizer, ServerMetrics& metrics, int slots,
                    int64_t max_queue, int64_t prefill_chunk, PromptLookup prompt_lookup, int threads);
  ~GenerationService() { stop(); }

  // The engine: runs jobs on the calling thread until stop() and the running ones are done. Call
  // it on the thread that loaded the session: a second OpenMP thread pool would put more threads
  // in pools than there are cores, and libgomp then sleeps at every barrier instead of spinning.
  void run();
  // New jobs are refused, the waiting ones end with 503; the running ones finish.
  void stop();

  // Null when the queue is full.
  std::shared_ptr<Job> submit(GenerationJob job);
  int64_t queued() const;
  int64_t running() const { return running_; }

 private:
  struct Sequence;
  // The job's prefill and first token; null when it ended there (finished already).
  std::unique_ptr<Sequence> start(std::shared_ptr<Job> job);
  void finish(Sequence& sequence);

  Session& session_;
  const Tokenizer& tokenizer_;
  ServerMetrics& metrics_;
  const int64_t slots_;
  const int64_t max_queue_;
  const int64_t prefill_chunk_;
  const PromptLookup prompt_lookup_;
  const int threads_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::atomic<int64_t> running_ = 0;
};

}  // namespace canrun
