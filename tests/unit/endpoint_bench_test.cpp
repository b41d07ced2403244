// canrun bench --endpoint's pieces: the server-sent event stream cut at any byte, arrival times
// with the mean gap of their rate, the serving numbers of hand-made responses, service-level
// objectives and endpoint URLs parsed with errors naming the option, and the sweep's drawing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "bench/arrivals.h"
#include "bench/endpoint_client.h"
#include "bench/serving_metrics.h"
#include "bench/sse_stream.h"
#include "bench/sweep_plot.h"
#include "util/error.h"

namespace canrun {
namespace {

std::vector<std::string> events_of(const std::string& bytes, size_t piece) {
  std::vector<std::string> events;
  SseStream stream([&](const std::string& data) { events.push_back(data); });
  for (size_t at = 0; at < bytes.size(); at += piece) stream.feed(std::string_view(bytes).substr(at, piece));
  stream.finish();
  return events;
}

TEST(SseStream, EventsAreWholeHoweverTheBytesArrive) {
  const std::string bytes =
      ": a comment\r\n"
      "data: {\"a\":1}\r\n\r\n"
      "event: ping\n\n"                       // no data: nothing handed on
      "data:{\"b\":2}\n"                      // no space after the colon
      "data: second line\n\n"                 // two data lines join with a newline
      "id: 7\ndata: [DONE]";                  // the last event without its blank line
  const std::vector<std::string> expected = {"{\"a\":1}", "{\"b\":2}\nsecond line", "[DONE]"};
  for (size_t piece : {1u, 2u, 5u, 1000u}) EXPECT_EQ(events_of(bytes, piece), expected) << "pieces of " << piece;
}

TEST(Arrivals, AnInfiniteRateSendsEverythingAtOnce) {
  EXPECT_EQ(arrival_times({}, 3, 0), std::vector<double>(3, 0.0));
}

TEST(Arrivals, GapsAverageTheInverseRateAndFollowTheSeed) {
  for (double burstiness : {0.5, 1.0, 4.0}) {
    const std::vector<double> times = arrival_times({20.0, burstiness}, 20001, 3);
    EXPECT_EQ(times.front(), 0.0);
    EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
    EXPECT_NEAR(times.back() / 20000, 1.0 / 20, 0.05 / 20) << "burstiness " << burstiness;
    EXPECT_EQ(arrival_times({20.0, burstiness}, 50, 3), std::vector<double>(times.begin(), times.begin() + 50));
  }
  // A lower shape spreads the gaps more: the coefficient of variation is 1 / sqrt(burstiness).
  const auto spread = [](double burstiness) {
    const std::vector<double> times = arrival_times({10.0, burstiness}, 20001, 5);
    std::vector<double> gaps(times.size() - 1);
    for (size_t i = 0; i < gaps.size(); ++i) gaps[i] = times[i + 1] - times[i];
    const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
    double square = 0;
    for (double gap : gaps) square += (gap - mean) * (gap - mean);
    return std::sqrt(square / static_cast<double>(gaps.size())) / mean;
  };
  EXPECT_NEAR(spread(0.25), 2.0, 0.1);
  EXPECT_NEAR(spread(1.0), 1.0, 0.05);
  EXPECT_NEAR(spread(4.0), 0.5, 0.03);
}

StreamedResponse response(int64_t prompt, int64_t output, double ttft, double latency, std::vector<double> itl) {
  StreamedResponse r;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.first_token_s = ttft;
  r.latency_s = latency;
  r.inter_token_s = std::move(itl);
  r.requested_tokens = output;
  return r;
}

TEST(ServingMetrics, HandComputedFromThreeResponses) {
  StreamedResponse failed;
  failed.error = "HTTP 500: overloaded";
  std::vector<StreamedResponse> responses = {
      response(10, 5, 0.1, 0.5, {0.1, 0.1, 0.1, 0.1}),  // TPOT (0.5 - 0.1) / 4 = 0.1
      response(20, 3, 0.3, 0.5, {0.1, 0.1}),            // TPOT 0.1
      response(30, 1, 0.2, 0.2, {}),                    // one token: no TPOT
      failed, failed};
  responses[2].requested_tokens = 4;  // the server stopped early
  const ServingResults r = summarize_serving(responses, 2.0, parse_slo("ttft=250ms,tpot=150ms"));
  EXPECT_EQ(r.completed, 3);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(r.errors, std::vector<std::string>{"HTTP 500: overloaded"});
  EXPECT_EQ(r.prompt_tokens, 60);
  EXPECT_EQ(r.output_tokens, 9);
  EXPECT_EQ(r.short_outputs, 1);
  EXPECT_DOUBLE_EQ(r.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(r.output_throughput, 4.5);
  EXPECT_DOUBLE_EQ(r.total_token_throughput, 34.5);
  EXPECT_DOUBLE_EQ(r.ttft_s.mean, 0.2);
  EXPECT_DOUBLE_EQ(r.ttft_s.p50, 0.2);
  EXPECT_NEAR(r.ttft_s.p90, 0.28, 1e-12);  // numpy: 0.2 + 0.8 * (0.3 - 0.2)
  EXPECT_EQ(r.tpot_s.count, 2u);
  EXPECT_NEAR(r.tpot_s.mean, 0.1, 1e-12);
  EXPECT_EQ(r.itl_s.count, 6u);
  EXPECT_NEAR(r.e2el_s.mean, 0.4, 1e-12);
  EXPECT_EQ(r.good_requests, 2);  // the second's TTFT 0.3 is past 250 ms
  EXPECT_DOUBLE_EQ(r.goodput, 1.0);
  EXPECT_EQ(summarize_serving(responses, 2.0, {}).good_requests, 3);
}

std::string usage_error(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Slo, ParsesMillisecondsAndSeconds) {
  const Slo slo = parse_slo("ttft=500ms,tpot=50ms,e2el=2.5s");
  EXPECT_DOUBLE_EQ(*slo.ttft_s, 0.5);
  EXPECT_DOUBLE_EQ(*slo.tpot_s, 0.05);
  EXPECT_DOUBLE_EQ(*slo.e2el_s, 2.5);
  EXPECT_EQ(slo.text(), "ttft<=500ms, tpot<=50ms, e2el<=2500ms");
  EXPECT_TRUE(Slo{}.empty());
}

TEST(Slo, ErrorsNameTheOptionAndThePart) {
  const auto error = [](const char* text) { return usage_error([&] { parse_slo(text); }); };
  EXPECT_NE(error("ttft").find("--slo 'ttft': 'ttft' is not NAME=DURATION"), std::string::npos);
  EXPECT_NE(error("ttft=5").find("'5' is not a positive duration in ms or s"), std::string::npos);
  EXPECT_NE(error("ttft=-5ms").find("'-5ms' is not a positive duration"), std::string::npos);
  EXPECT_NE(error("ttft=1s,ttft=2s").find("ttft is given twice"), std::string::npos);
  EXPECT_NE(error("itl=1ms").find("unknown objective 'itl' (ttft, tpot or e2el)"), std::string::npos);
  EXPECT_NE(error("ttft=1s,").find("'' is not NAME=DURATION"), std::string::npos);
}

TEST(EndpointUrl, NamesItsRouteOrGetsOne) {
  Endpoint e = parse_endpoint("http://host:8000", false);
  EXPECT_EQ(e.origin, "http://host:8000");
  EXPECT_EQ(e.path, "/v1/completions");
  e = parse_endpoint("https://host/api/v1/", true);
  EXPECT_EQ(e.origin, "https://host");
  EXPECT_EQ(e.path, "/api/v1/chat/completions");
  EXPECT_TRUE(e.chat);
  e = parse_endpoint("http://host/v1/chat/completions", false);  // the URL names the API
  EXPECT_TRUE(e.chat);
  e = parse_endpoint("http://host/prefix/v1/completions", true);
  EXPECT_FALSE(e.chat);
  EXPECT_EQ(e.path, "/prefix/v1/completions");
  EXPECT_NE(usage_error([] { parse_endpoint("host:8000", false); }).find("expected http://HOST"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_endpoint("http:///v1", false); }).find("no host"), std::string::npos);
}

TEST(SweepPlot, APointPerConcurrencyInEachPanel) {
  const std::string svg = throughput_latency_svg({{4, 300, 0.05, 0.012}, {1, 100, 0.02, 0.01}}, "a<b & c");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 4u);
  EXPECT_NE(svg.find("a&lt;b &amp; c"), std::string::npos);
  EXPECT_NE(svg.find("concurrency 1: 100 tokens/s, 20 ms"), std::string::npos);
  EXPECT_NE(svg.find("concurrency 4: 300 tokens/s, 12 ms"), std::string::npos);
}

}  // namespace
}  // namespace canrun
