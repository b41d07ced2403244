#include "bench/serving_metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/error.h"

namespace canrun {
namespace {

std::string milliseconds(double seconds) {
  const double ms = seconds * 1000;
  char text[32];
  std::snprintf(text, sizeof text, "%gms", ms);
  return text;
}

// "500ms" or "2s" (or "0.5s") in seconds; nullopt when it is neither.
std::optional<double> parse_duration(std::string_view text) {
  double scale = 0;
  if (text.ends_with("ms")) {
    scale = 1e-3;
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    scale = 1;
    text.remove_suffix(1);
  } else {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0)
    return std::nullopt;
  return value * scale;
}

// TPOT of one completed request; nullopt below two output tokens.
std::optional<double> time_per_output_token(const StreamedResponse& response) {
  if (response.output_tokens < 2) return std::nullopt;
  return (response.latency_s - response.first_token_s) / static_cast<double>(response.output_tokens - 1);
}

bool within(const std::optional<double>& bound, double value) { return !bound || value <= *bound; }

}  // namespace

std::string Slo::text() const {
  std::string text;
  const auto add = [&](const char* name, const std::optional<double>& bound) {
    if (bound) text += (text.empty() ? "" : ", ") + std::string(name) + "<=" + milliseconds(*bound);
  };
  add("ttft", ttft_s);
  add("tpot", tpot_s);
  add("e2el", e2el_s);
  return text;
}

Slo parse_slo(std::string_view text) {
  Slo slo;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    const std::string quoted = "--slo '" + std::string(text) + "': ";
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      fail(ErrorKind::kUsage, quoted + "'" + std::string(item) + "' is not NAME=DURATION (e.g. ttft=500ms)");
    const std::string_view name = item.substr(0, equals);
    std::optional<double>* bound = name == "ttft" ? &slo.ttft_s : name == "tpot" ? &slo.tpot_s
                                   : name == "e2el" ? &slo.e2el_s : nullptr;
    if (!bound) fail(ErrorKind::kUsage, quoted + "unknown objective '" + std::string(name) + "' (ttft, tpot or e2el)");
    if (*bound) fail(ErrorKind::kUsage, quoted + std::string(name) + " is given twice");
    *bound = parse_duration(item.substr(equals + 1));
    if (!*bound)
      fail(ErrorKind::kUsage, quoted + "'" + std::string(item.substr(equals + 1)) +
                                  "' is not a positive duration in ms or s (e.g. 500ms, 2s)");
  }
  return slo;
}

ServingResults summarize_serving(const std::vector<StreamedResponse>& responses, double duration_s, const Slo& slo) {
  ServingResults results;
  results.duration_s = duration_s;
  std::vector<double> ttfts, tpots, itls, e2els;
  for (const StreamedResponse& response : responses) {
    if (!response.error.empty()) {
      ++results.failed;
      if (std::find(results.errors.begin(), results.errors.end(), response.error) == results.errors.end())
        results.errors.push_back(response.error);
      continue;
    }
    ++results.completed;
    results.prompt_tokens += response.prompt_tokens;
    results.output_tokens += response.output_tokens;
    if (response.output_tokens < response.requested_tokens) ++results.short_outputs;
    ttfts.push_back(response.first_token_s);
    e2els.push_back(response.latency_s);
    itls.insert(itls.end(), response.inter_token_s.begin(), response.inter_token_s.end());
    const std::optional<double> tpot = time_per_output_token(response);
    if (tpot) tpots.push_back(*tpot);
    if (within(slo.ttft_s, response.first_token_s) && within(slo.tpot_s, tpot.value_or(0)) &&
        within(slo.e2el_s, response.latency_s))
      ++results.good_requests;
  }
  results.ttft_s = summarize(ttfts);
  results.tpot_s = summarize(tpots);
  results.itl_s = summarize(itls);
  results.e2el_s = summarize(e2els);
  if (duration_s > 0) {
    results.request_throughput = static_cast<double>(results.completed) / duration_s;
    results.output_throughput = static_cast<double>(results.output_tokens) / duration_s;
    results.total_token_throughput = static_cast<double>(results.prompt_tokens + results.output_tokens) / duration_s;
    results.goodput = static_cast<double>(results.good_requests) / duration_s;
  }
  return results;
}

}  // namespace canrun
