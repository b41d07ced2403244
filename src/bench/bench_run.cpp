#include "bench/bench_run.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <memory>

namespace canrun {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// A request in flight: its generation and the times of its tokens.
struct InFlight {
  RequestMeasurement* measurement = nullptr;
  Clock::time_point start, previous;
  std::unique_ptr<SequenceRun> run;
};

// Starts `request` (its prefill and first token); null when it ended there or failed.
std::unique_ptr<InFlight> start_request(Session& session, const BenchRequest& request, int64_t prefill_chunk,
                                        const PromptLookup& prompt_lookup, RequestMeasurement& measurement) {
  auto flight = std::make_unique<InFlight>();
  InFlight& f = *flight;
  f.measurement = &measurement;
  measurement.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  GenerateRequest options;
  options.max_new_tokens = request.output_tokens;
  options.kv_dtype = request.kv_dtype;
  options.prefill_chunk = prefill_chunk;
  options.prompt_lookup = prompt_lookup;
  options.eos_token_ids = std::vector<int32_t>{};  // always the full length
  options.on_token = [&f](int32_t) {
    const Clock::time_point now = Clock::now();
    RequestMeasurement& m = *f.measurement;
    if (m.generated_tokens == 0) m.first_token_s = seconds_between(f.start, now);
    else m.token_latencies_s.push_back(seconds_between(f.previous, now));
    f.previous = now;
    ++m.generated_tokens;
  };
  f.start = f.previous = Clock::now();
  try {
    if (request.pixels) {
      options.visual = session.encode_images(request.prompt, *request.pixels);
      measurement.vision_s = seconds_between(f.start, Clock::now());
    }
    f.run = session.start(request.prompt, options);
  } catch (const std::exception& e) {
    measurement.error = e.what();
    return nullptr;
  }
  return flight;
}

void record_end(InFlight& flight) {
  const GenerationResult& result = flight.run->result();
  flight.measurement->prefill_s = result.prefill_seconds;
  flight.measurement->decode_s = result.decode_seconds;
  flight.measurement->drafted_tokens = result.drafted_tokens;
  flight.measurement->accepted_tokens = result.accepted_tokens;
}

// Runs requests [first, last), up to `concurrency` decoding together (Session::step_batch): the
// next request starts as soon as one ends, its prompt in pieces between the others' steps. Returns
// their measurements in order.
std::vector<RequestMeasurement> run_requests(Session& session, const std::vector<BenchRequest>& requests,
                                             size_t first, size_t last, const Workload& workload,
                                             const std::function<void()>& on_done) {
  const int64_t concurrency = workload.concurrency;
  const int64_t prefill_chunk = concurrency > 1 ? workload.prefill_chunk : 0;  // alone, nobody waits
  std::vector<RequestMeasurement> measurements(last - first);
  std::vector<std::unique_ptr<InFlight>> flying;
  for (size_t next = first; next < last || !flying.empty();) {
    for (; next < last && static_cast<int64_t>(flying.size()) < concurrency; ++next) {
      std::unique_ptr<InFlight> flight =
          start_request(session, requests[next], prefill_chunk, workload.prompt_lookup, measurements[next - first]);
      if (flight && !flight->run->ended()) {
        flying.push_back(std::move(flight));
        continue;
      }
      if (flight) record_end(*flight);
      if (on_done) on_done();
    }
    if (flying.empty()) continue;
    std::vector<SequenceRun*> runs;
    for (const auto& flight : flying) runs.push_back(flight->run.get());
    try {
      session.step_batch(runs);
    } catch (const std::exception& e) {
      for (const auto& flight : flying) flight->measurement->error = e.what();
      for (size_t i = 0; i < flying.size(); ++i)
        if (on_done) on_done();
      flying.clear();
      continue;
    }
    std::erase_if(flying, [&](const std::unique_ptr<InFlight>& flight) {
      if (!flight->run->ended()) return false;
      record_end(*flight);
      if (on_done) on_done();
      return true;
    });
  }
  return measurements;
}

}  // namespace

BenchRun run_bench(Session& session, const std::vector<BenchRequest>& requests, const Workload& workload,
                   int threads, const std::function<void(int64_t, int64_t)>& on_done) {
  BenchRun run;
  omp_set_num_threads(threads);
  int64_t done = 0;
  const int64_t total = static_cast<int64_t>(requests.size());
  const auto count_done = [&] {
    ++done;
    if (on_done) on_done(done, total);
  };
  const size_t warmup = static_cast<size_t>(std::min<int64_t>(workload.warmup, total));
  run_requests(session, requests, 0, warmup, workload, count_done);
  const Clock::time_point start = Clock::now();
  run.measured = run_requests(session, requests, warmup, requests.size(), workload, count_done);
  run.wall_s = seconds_between(start, Clock::now());
  return run;
}

BenchResults summarize_run(const BenchRun& run) {
  BenchResults results;
  std::vector<double> first_tokens;
  std::vector<double> visions;
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
    results.drafted_tokens += request.drafted_tokens;
    results.accepted_tokens += request.accepted_tokens;
    first_tokens.push_back(request.first_token_s);
    if (request.vision_s) visions.push_back(*request.vision_s);
    latencies.insert(latencies.end(), request.token_latencies_s.begin(), request.token_latencies_s.end());
    prefill_s += request.prefill_s;
    decode_s += request.decode_s;
    decode_tokens += std::max<int64_t>(0, request.generated_tokens - 1);
  }
  results.first_token_s = summarize(first_tokens);
  results.vision_s = summarize(visions);
  results.token_latency_s = summarize(latencies);
  if (prefill_s > 0) results.prefill_tokens_per_s = static_cast<double>(results.prompt_tokens) / prefill_s;
  if (decode_s > 0) results.decode_tokens_per_s = static_cast<double>(decode_tokens) / decode_s;
  if (run.wall_s > 0) results.throughput_tokens_per_s = static_cast<double>(results.generated_tokens) / run.wall_s;
  return results;
}

}  // namespace canrun
