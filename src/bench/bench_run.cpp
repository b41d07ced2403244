#include "bench/bench_run.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>


namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

RequestMeasurement run_request(Session& session, const BenchRequest& request) {
  RequestMeasurement measurement;
  measurement.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  GenerateRequest options;
  options.max_new_tokens = request.output_tokens;
  options.kv_dtype = request.kv_dtype;
  options.eos_token_ids = std::vector<int32_t>{};  // always the full length
  const Clock::time_point start = Clock::now();
  Clock::time_point previous = start;
  options.on_token = [&](int32_t) {
    const Clock::time_point now = Clock::now();
    if (measurement.generated_tokens == 0) measurement.first_token_s = seconds_between(start, now);
    else measurement.token_latencies_s.push_back(seconds_between(previous, now));
    previous = now;
    ++measurement.generated_tokens;
  };
  try {
    const GenerationResult result = session.generate(request.prompt, options);
    measurement.prefill_s = result.prefill_seconds;
    measurement.decode_s = result.decode_seconds;
  } catch (const std::exception& e) {
    measurement.error = e.what();
  }
  return measurement;
}

// Runs requests [first, last) `concurrency` at a time; returns their measurements in order.
std::vector<RequestMeasurement> run_requests(Session& session, const std::vector<BenchRequest>& requests,
                                             size_t first, size_t last, int64_t concurrency, int threads_each,
                                             const std::function<void()>& on_done) {
  std::vector<RequestMeasurement> measurements(last - first);
  std::atomic<size_t> next = first;
  std::mutex done_mutex;
  const auto worker = [&] {
    omp_set_num_threads(threads_each);  // this thread's own OpenMP setting
    for (size_t i = next++; i < last; i = next++) {
      measurements[i - first] = run_request(session, requests[i]);
      const std::lock_guard lock(done_mutex);
      if (on_done) on_done();
    }
  };
  const size_t count = std::min<size_t>(static_cast<size_t>(concurrency), last - first);
  // One at a time runs on this thread: a thread of its own would start a second OpenMP thread
  // pool, and with more pooled threads than cores libgomp stops spinning at barriers and puts
  // its threads to sleep at every one (decode's products pay a futex wake-up each).
  if (count == 1) {
    worker();
    return measurements;
  }
  std::vector<std::thread> workers;
  for (size_t i = 0; i < count; ++i) workers.emplace_back(worker);
  for (std::thread& thread : workers) thread.join();
  return measurements;
}

}  // namespace

BenchRun run_bench(Session& session, const std::vector<BenchRequest>& requests, const Workload& workload,
                   int threads, const std::function<void(int64_t, int64_t)>& on_done) {
  BenchRun run;
  run.threads_per_request = std::max(1, threads / static_cast<int>(std::max<int64_t>(1, workload.concurrency)));
  int64_t done = 0;
  const int64_t total = static_cast<int64_t>(requests.size());
  const auto count_done = [&] {
    ++done;
    if (on_done) on_done(done, total);
  };
  const size_t warmup = static_cast<size_t>(std::min<int64_t>(workload.warmup, total));
  run_requests(session, requests, 0, warmup, workload.concurrency, run.threads_per_request, count_done);
  const Clock::time_point start = Clock::now();
  run.measured = run_requests(session, requests, warmup, requests.size(), workload.concurrency,
                              run.threads_per_request, count_done);
  run.wall_s = seconds_between(start, Clock::now());
  return run;
}

BenchResults summarize_run(const BenchRun& run) {
  BenchResults results;
  std::vector<double> first_tokens;
  std::vector<double> latencies;
  double prefill_s = 0;
  double decode_s = 0;
  int64_t decode_tokens = 0;
  for (const RequestMeasurement& request : run.measured) {
    if (!request.error.empty()) {
      ++results.failures;
      if (std::find(results.errors.begin(), results.errors.end(), request.error) == results.errors.end())
        results.errors.push_back(request.error);
      continue;
    }
    results.prompt_tokens += request.prompt_tokens;
    results.generated_tokens += request.generated_tokens;
    first_tokens.push_back(request.first_token_s);
    latencies.insert(latencies.end(), request.token_latencies_s.begin(), request.token_latencies_s.end());
    prefill_s += request.prefill_s;
    decode_s += request.decode_s;
    decode_tokens += std::max<int64_t>(0, request.generated_tokens - 1);
  }
  results.first_token_s = summarize(first_tokens);
  results.token_latency_s = summarize(latencies);
  if (prefill_s > 0) results.prefill_tokens_per_s = static_cast<double>(results.prompt_tokens) / prefill_s;
  if (decode_s > 0) results.decode_tokens_per_s = static_cast<double>(decode_tokens) / decode_s;
  if (run.wall_s > 0) results.throughput_tokens_per_s = static_cast<double>(results.generated_tokens) / run.wall_s;
  return results;
}

}  // namespace canrun
