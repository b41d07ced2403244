// canrun bench's workload and statistics: length ranges parsed with errors naming the option,
// requests reproducible from the seed, images' tokens in front of every prompt, percentiles as
// numpy computes them, and failed requests counted apart from the measured ones.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/bench_run.h"
#include "bench/statistics.h"
#include "bench/workload.h"
#include "util/error.h"

namespace canrun {
namespace {

std::string usage_error(std::string_view text) {
  try {
    parse_lengths(text, "--prompt-tokens", 1);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return "";
}

TEST(BenchWorkload, ParsesALengthOrARange) {
  const LengthDistribution fixed = parse_lengths("128", "--prompt-tokens", 1);
  EXPECT_EQ(fixed.low, 128);
  EXPECT_EQ(fixed.high, 128);
  EXPECT_EQ(fixed.text(), "128");
  const LengthDistribution range = parse_lengths("64-512", "--prompt-tokens", 1);
  EXPECT_EQ(range.low, 64);
  EXPECT_EQ(range.high, 512);
  EXPECT_EQ(range.text(), "64-512");
}

TEST(BenchWorkload, ErrorsNameTheOptionAndTheValue) {
  EXPECT_NE(usage_error("abc").find("--prompt-tokens 'abc': not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("16-8").find("the range ends below its start"), std::string::npos);
  EXPECT_NE(usage_error("0").find("must be at least 1"), std::string::npos);
  EXPECT_NE(usage_error("8-").find("the range's end is not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("").find("not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("-5").find("not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("2000000").find("longer than 1,000,000"), std::string::npos);
}

TEST(BenchWorkload, RequestsFollowTheSeedAndStayInRange) {
  Workload workload;
  workload.prompt = {3, 9};
  workload.output = {1, 4};
  workload.requests = 20;
  workload.warmup = 2;
  workload.seed = 7;
  const std::vector<BenchRequest> requests = make_requests(workload, 50);
  ASSERT_EQ(requests.size(), 22u);
  bool lengths_vary = false;
  for (const BenchRequest& request : requests) {
    EXPECT_GE(request.prompt.size(), 3u);
    EXPECT_LE(request.prompt.size(), 9u);
    EXPECT_GE(request.output_tokens, 1);
    EXPECT_LE(request.output_tokens, 4);
    for (const int32_t id : request.prompt) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 50);
    }
    lengths_vary = lengths_vary || request.prompt.size() != requests[0].prompt.size();
  }
  EXPECT_TRUE(lengths_vary);
  const std::vector<BenchRequest> again = make_requests(workload, 50);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].prompt, again[i].prompt);
    EXPECT_EQ(requests[i].output_tokens, again[i].output_tokens);
  }
  workload.seed = 8;
  EXPECT_NE(make_requests(workload, 50)[0].prompt, requests[0].prompt);
}

TEST(BenchWorkload, ImagesGoInFrontOfEveryPromptAndOnlyThereAreImageTokens) {
  Workload workload;
  workload.prompt = {40, 40};
  workload.requests = 3;
  workload.seed = 1;
  constexpr int32_t kImageToken = 3;  // the last of the 4 ids drawn from: its next id is 0
  std::vector<BenchRequest> requests = make_requests(workload, 4);
  const std::vector<BenchRequest> text = requests;
  ASSERT_GT(std::count(text[0].prompt.begin(), text[0].prompt.end(), kImageToken), 0);
  // Each image's run ends with one other id, so two images are two runs, as the processor makes them.
  const std::vector<int32_t> prefix = image_prompt_prefix(kImageToken, {3, 2}, 4);
  EXPECT_EQ(prefix, (std::vector<int32_t>{3, 3, 3, 0, 3, 3, 0}));
  auto pixels = std::make_shared<const PixelValues>();
  add_images(requests, prefix, pixels, kImageToken, 4);
  for (size_t r = 0; r < requests.size(); ++r) {
    const std::vector<int32_t>& prompt = requests[r].prompt;
    ASSERT_EQ(prompt.size(), prefix.size() + text[r].prompt.size());
    EXPECT_EQ(std::vector<int32_t>(prompt.begin(), prompt.begin() + 7), prefix);
    for (size_t i = 0; i < text[r].prompt.size(); ++i)
      EXPECT_EQ(prompt[7 + i], text[r].prompt[i] == kImageToken ? 0 : text[r].prompt[i]);
    EXPECT_EQ(requests[r].pixels, pixels);
  }
}

TEST(BenchStatistics, PercentilesInterpolateLikeNumpy) {
  // numpy.percentile([4, 1, 3, 2], [50, 95]) == [2.5, 3.85]
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_NEAR(percentile({4, 1, 3, 2}, 95), 3.85, 1e-12);
  EXPECT_DOUBLE_EQ(percentile({5}, 95), 5);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
  const Summary summary = summarize({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(summary.mean, 4);
  EXPECT_DOUBLE_EQ(summary.p50, 2.5);
  EXPECT_DOUBLE_EQ(summary.max, 10);
  EXPECT_EQ(summary.count, 4u);
}

TEST(BenchStatistics, FailedRequestsAreCountedNotMeasured) {
  BenchRun run;
  run.wall_s = 2.0;
  RequestMeasurement ok;
  ok.prompt_tokens = 10;
  ok.generated_tokens = 3;
  ok.first_token_s = 0.5;
  ok.prefill_s = 0.4;
  ok.decode_s = 0.2;
  ok.token_latencies_s = {0.1, 0.1};
  RequestMeasurement failed;
  failed.prompt_tokens = 99;
  failed.error = "boom";
  run.measured = {ok, failed, ok, failed};
  const BenchResults results = summarize_run(run);
  EXPECT_EQ(results.failures, 2);
  EXPECT_EQ(results.errors, std::vector<std::string>{"boom"});
  EXPECT_EQ(results.prompt_tokens, 20);
  EXPECT_EQ(results.generated_tokens, 6);
  EXPECT_DOUBLE_EQ(results.prefill_tokens_per_s, 20 / 0.8);
  EXPECT_DOUBLE_EQ(results.decode_tokens_per_s, 4 / 0.4);
  EXPECT_DOUBLE_EQ(results.throughput_tokens_per_s, 3.0);
  EXPECT_EQ(results.token_latency_s.count, 4u);
  EXPECT_EQ(results.first_token_s.count, 2u);
}

}  // namespace
}  // namespace canrun
