#include "openai/server_metrics.h"

#include <algorithm>
#include <cstdio>

namespace canrun {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

std::string header(const std::string& name, const char* type, const char* help) {
  return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::observe(double value) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

std::string Histogram::text(const std::string& name) const {
  std::string out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + (i < bounds_.size() ? number(bounds_[i]) : "+Inf") + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  return out + name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

ServerMetrics::ServerMetrics()
    : ttft_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}),
      batch_({1, 2, 4, 8, 16, 32, 64, 128}),
      start_(Clock::now()) {
  window_second_.fill(-1);
}

void ServerMetrics::request_done(const std::string& route, int status) {
  const std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
}

void ServerMetrics::first_token(double seconds) {
  const std::lock_guard lock(mutex_);
  ttft_.observe(seconds);
}

void ServerMetrics::next_token(double seconds) {
  const std::lock_guard lock(mutex_);
  itl_.observe(seconds);
}

void ServerMetrics::tokens_generated(int64_t count, Clock::time_point now) {
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
  const std::lock_guard lock(mutex_);
  generated_ += static_cast<uint64_t>(count);
  const size_t slot = static_cast<size_t>(second % kWindowSeconds);
  if (window_second_[slot] != second) {
    window_second_[slot] = second;
    window_[slot] = 0;
  }
  window_[slot] += static_cast<uint64_t>(count);
}

void ServerMetrics::prompt_processed(int64_t tokens) {
  const std::lock_guard lock(mutex_);
  prompt_ += static_cast<uint64_t>(tokens);
}

void ServerMetrics::decode_step(int64_t sequences) {
  const std::lock_guard lock(mutex_);
  batch_.observe(static_cast<double>(sequences));
}

void ServerMetrics::cancelled() {
  const std::lock_guard lock(mutex_);
  ++cancelled_;
}

std::string ServerMetrics::text(int64_t queued, int64_t running, Clock::time_point now) const {
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
  const std::lock_guard lock(mutex_);
  // The whole seconds before the current one, as far back as the window and the uptime reach.
  uint64_t recent = 0;
  const int64_t seconds = std::min<int64_t>(kWindowSeconds, second);
  for (size_t slot = 0; slot < window_.size(); ++slot)
    if (window_second_[slot] >= second - seconds && window_second_[slot] < second) recent += window_[slot];
  std::string out;
  out += header("canrun_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, count] : requests_)
    out += "canrun_requests_total{route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(count) + "\n";
  out += header("canrun_queue_length", "gauge", "Requests waiting for a free sequence slot.");
  out += "canrun_queue_length " + std::to_string(queued) + "\n";
  out += header("canrun_running_sequences", "gauge", "Sequences being generated.");
  out += "canrun_running_sequences " + std::to_string(running) + "\n";
  out += header("canrun_prompt_tokens_total", "counter", "Prompt tokens processed.");
  out += "canrun_prompt_tokens_total " + std::to_string(prompt_) + "\n";
  out += header("canrun_generation_tokens_total", "counter", "Tokens generated.");
  out += "canrun_generation_tokens_total " + std::to_string(generated_) + "\n";
  out += header("canrun_generation_tokens_per_second", "gauge",
                "Tokens generated per second over the last 10 whole seconds (fewer just after the start).");
  out += "canrun_generation_tokens_per_second " + number(seconds > 0 ? static_cast<double>(recent) / seconds : 0) +
         "\n";
  out += header("canrun_requests_cancelled_total", "counter",
                "Generations stopped because their client went away or their time ran out.");
  out += "canrun_requests_cancelled_total " + std::to_string(cancelled_) + "\n";
  out += header("canrun_time_to_first_token_seconds", "histogram", "From a request's arrival to its first token.");
  out += ttft_.text("canrun_time_to_first_token_seconds");
  out += header("canrun_inter_token_latency_seconds", "histogram", "Between consecutive tokens of a sequence.");
  out += itl_.text("canrun_inter_token_latency_seconds");
  out += header("canrun_decode_batch_size", "histogram", "Sequences decoded together, per decode step.");
  out += batch_.text("canrun_decode_batch_size");
  return out;
}

}  // namespace canrun
