-- wrk script for bench/serve_load.sh: rotates over typical /api/rows requests (the page's views,
-- sorts and searches) and prints the latency percentiles and throughput on one line.
local paths = {
  "/api/rows?view=tested&task=text-generation&sort=rank&order=asc&limit=200",
  "/api/rows?view=tested&task=text-generation&sort=wall_time_s&order=desc&limit=200",
  "/api/rows?view=tested&task=text-generation&q=qwen&sort=model_id&limit=200",
  "/api/rows?view=tested&task=text-generation&result=PASS&sort=peak_host_memory_bytes&limit=200",
  "/api/rows?view=downloads&task=text-generation&limit=500",
  "/api/rows?view=selected&task=text-generation&limit=500",
}
local sent = 0

function request()
  sent = sent + 1
  return wrk.format("GET", paths[(sent % #paths) + 1])
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f req_per_s=%.0f p50_ms=%.2f p95_ms=%.2f p99_ms=%.2f max_ms=%.2f non_2xx=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
