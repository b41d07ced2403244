#include "bench/endpoint_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

// Sends prompts [first, last): the i-th not before `start + offsets[i - first]`, `concurrency`
// threads taking them in order.
std::vector<StreamedResponse> send_all(const Endpoint& endpoint, const std::vector<EndpointPrompt>& prompts,
                                       size_t first, size_t last, int64_t concurrency,
                                       const std::vector<double>& offsets, Clock::time_point start,
                                       const std::function<void()>& on_done) {
  std::vector<StreamedResponse> responses(last - first);
  std::atomic<size_t> next = first;
  std::mutex done_mutex;
  const auto worker = [&] {
    EndpointClient client(endpoint);
    for (size_t i = next++; i < last; i = next++) {
      if (!offsets.empty())
        std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(offsets[i - first])));
      responses[i - first] = client.send(prompts[i]);
      const std::lock_guard lock(done_mutex);
      if (on_done) on_done();
    }
  };
  const size_t limit = concurrency > 0 ? static_cast<size_t>(concurrency) : last - first;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < std::min(limit, last - first); ++i) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();
  return responses;
}

}  // namespace

EndpointRun run_endpoint_bench(const Endpoint& endpoint, const std::vector<EndpointPrompt>& prompts, int64_t warmup,
                               int64_t concurrency, const std::vector<double>& arrival_times,
                               const std::function<void(int64_t, int64_t)>& on_done) {
  const int64_t total = static_cast<int64_t>(prompts.size());
  int64_t done = 0;
  const auto count_done = [&] {
    ++done;
    if (on_done) on_done(done, total);
  };
  const size_t warmed = static_cast<size_t>(std::clamp<int64_t>(warmup, 0, total));
  send_all(endpoint, prompts, 0, warmed, concurrency, {}, Clock::now(), count_done);
  EndpointRun run;
  const Clock::time_point start = Clock::now();
  run.measured = send_all(endpoint, prompts, warmed, prompts.size(), concurrency, arrival_times, start, count_done);
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace canrun
