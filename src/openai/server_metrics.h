// What the model server's /metrics says, in Prometheus' text format: requests by route and
// status, queue length and running sequences, prompt and generated tokens (and tokens/s over the
// last 10 seconds), and histograms of time to first token, inter-token latency and the sequences
// decoded together per step.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace canrun {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double value);
  // The exposition lines of metric `name` (its _bucket, _sum and _count series).
  std::string text(const std::string& name) const;

 private:
  std::vector<double> bounds_;   // upper bounds, ascending; +Inf is implied
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

class ServerMetrics {
 public:
  using Clock = std::chrono::steady_clock;

  ServerMetrics();
  void request_done(const std::string& route, int status);
  void first_token(double seconds);
  void next_token(double seconds_since_previous);
  void tokens_generated(int64_t count, Clock::time_point now = Clock::now());
  void prompt_processed(int64_t tokens);
  void cancelled();
  void decode_step(int64_t sequences);
  // The gauges are read when the page is made.
  std::string text(int64_t queued, int64_t running, Clock::time_point now = Clock::now()) const;

 private:
  static constexpr int kWindowSeconds = 10;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  Histogram ttft_, itl_, batch_;
  uint64_t generated_ = 0, prompt_ = 0, cancelled_ = 0;
  // Tokens per whole second since the server started, the last kWindowSeconds of them.
  std::array<uint64_t, kWindowSeconds> window_{};
  std::array<int64_t, kWindowSeconds> window_second_{};
  Clock::time_point start_;
};

}  // namespace canrun
