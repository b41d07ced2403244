// The OpenAI-compatible server's pieces: stop strings held back across pieces, request bodies
// read with errors naming the field, response objects as OpenAI's clients parse them, and the
// Prometheus histograms of /metrics.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "openai/api_error.h"
#include "openai/completion_request.h"
#include "openai/completion_response.h"
#include "openai/server_metrics.h"
#include "openai/stop_strings.h"

namespace canrun {
namespace {

std::string through(StopStringFilter& filter, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& piece : pieces) out += filter.push(piece);
  return out;
}

TEST(StopStrings, TextEndsBeforeAStopStringSplitOverPieces) {
  StopStringFilter filter({"END", "\n\n"});
  EXPECT_EQ(filter.push("Hello E"), "Hello ");  // "E" may begin "END"
  EXPECT_EQ(filter.push("N"), "");
  EXPECT_EQ(filter.push("Dless"), "");
  EXPECT_TRUE(filter.stopped());
  EXPECT_EQ(filter.push("more"), "");
  EXPECT_EQ(filter.finish(), "");
}

TEST(StopStrings, AFalseStartIsHandedOnAndTheRestAtTheEnd) {
  StopStringFilter filter({"END"});
  EXPECT_EQ(through(filter, {"a E", "NX b", " E"}), "a ENX b ");
  EXPECT_FALSE(filter.stopped());
  EXPECT_EQ(filter.finish(), "E");
  StopStringFilter none({});
  EXPECT_EQ(through(none, {"x", "y"}), "xy");
  StopStringFilter earliest({"cd", "b"});
  EXPECT_EQ(earliest.push("abcd"), "a");  // the first occurrence of any
}

int error_status(const std::string& body, bool chat, std::string* message = nullptr) {
  try {
    parse_completion_request(body, chat);
  } catch (const ApiError& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return 0;
}

TEST(CompletionRequest, ReadsEveryFieldItHonours) {
  const CompletionRequest r = parse_completion_request(
      R"({"model": "m", "prompt": "hi", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 40,
          "min_p": 0.1, "seed": 3, "stop": "\n", "stream": true, "stream_options": {"include_usage": true},
          "ignore_eos": true, "n": 1, "presence_penalty": 0})",
      false);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.prompt, "hi");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_TRUE(r.sampling.do_sample);
  EXPECT_DOUBLE_EQ(r.sampling.temperature, 0.5);
  EXPECT_DOUBLE_EQ(r.sampling.top_p, 0.9);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_DOUBLE_EQ(*r.sampling.min_p, 0.1);
  EXPECT_EQ(r.sampling.seed, 3u);
  EXPECT_EQ(r.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r.stream && r.include_usage && r.ignore_eos);
  // OpenAI's defaults: temperature 1 samples, every token (no top-k), 16 tokens decided later.
  const CompletionRequest defaults = parse_completion_request(R"({"prompt": [1, 2]})", false);
  EXPECT_TRUE(defaults.sampling.do_sample);
  EXPECT_EQ(defaults.sampling.top_k, 0);
  EXPECT_FALSE(defaults.max_tokens);
  EXPECT_EQ(*defaults.prompt_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_FALSE(parse_completion_request(R"({"prompt": "x", "temperature": 0})", false).sampling.do_sample);
  const CompletionRequest chat = parse_completion_request(
      R"({"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 4, "max_tokens": 9})", true);
  EXPECT_EQ(chat.max_tokens, 4);
  EXPECT_TRUE(chat.conversation.add_generation_prompt);
  const CompletionRequest prefill = parse_completion_request(
      R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hel"}]})", true);
  EXPECT_TRUE(prefill.conversation.continue_final_message);
}

TEST(CompletionRequest, ErrorsNameTheField) {
  std::string message;
  EXPECT_EQ(error_status("[1]", false, &message), 400);
  EXPECT_EQ(message, "the request body must be a JSON object, got array");
  EXPECT_EQ(error_status(R"({})", false, &message), 400);
  EXPECT_EQ(message, "prompt: required");
  EXPECT_EQ(error_status(R"({"prompt": [[1], [2]]})", false, &message), 400);
  EXPECT_NE(message.find("a batch of prompts is not supported"), std::string::npos);
  EXPECT_EQ(error_status(R"({"prompt": "x", "max_tokens": 1.5})", false, &message), 400);
  EXPECT_EQ(message, "max_tokens: expected an integer, got 1.5");
  EXPECT_EQ(error_status(R"({"prompt": "x", "top_p": 0})", false, &message), 400);
  EXPECT_EQ(message, "top_p: must be above 0");
  EXPECT_EQ(error_status(R"({"prompt": "x", "stop": ["a", ""]})", false, &message), 400);
  EXPECT_EQ(message, "stop: expected non-empty strings");
  EXPECT_EQ(error_status(R"({"prompt": "x", "logprobs": 2})", false, &message), 400);
  EXPECT_EQ(message, "logprobs: not supported");
  EXPECT_EQ(error_status(R"({"prompt": "x", "stream_options": {}})", false, &message), 400);
  EXPECT_EQ(message, "stream_options: only allowed with stream: true");
  EXPECT_EQ(error_status(R"({"messages": [{"content": "hi"}]})", true, &message), 400);
  EXPECT_NE(message.find("messages: entry 0: \"role\" must be a string"), std::string::npos);
  EXPECT_EQ(error_status(R"({"messages": []})", true, &message), 400);
  EXPECT_EQ(message, "messages: the list has no messages");
  EXPECT_EQ(error_status(R"({"prompt": "x", "frequency_penalty": 0.5})", false, &message), 400);
  EXPECT_EQ(message, "frequency_penalty: not supported (only 0)");
}

// Values at and past the edges of each numeric field: a 400 that names the field, never a 500
// from the sampler.
TEST(CompletionRequest, NumericEdgeValuesAre400sNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("temperature": 1e-300)", "temperature"},
      {R"("temperature": 0.001)", "temperature"},
      {R"("temperature": -1)", "temperature"},
      {R"("temperature": 2.5)", "temperature"},
      {R"("temperature": "1")", "temperature"},
      {R"("top_p": 1.5)", "top_p"},
      {R"("top_p": -0.1)", "top_p"},
      {R"("top_k": -2)", "top_k"},
      {R"("top_k": 10000000000)", "top_k"},
      {R"("min_p": 2)", "min_p"},
      {R"("max_tokens": -1)", "max_tokens"},
      {R"("max_tokens": 0)", "max_tokens"},
      {R"("max_tokens": 18446744073709551615)", "max_tokens"},
      {R"("max_tokens": 1e30)", "max_tokens"},
      {R"("max_completion_tokens": -5)", "max_completion_tokens"},
      {R"("n": 0)", "n"},
      {R"("n": 2)", "n"},
      {R"("n": 18446744073709551615)", "n"},
      {R"("seed": -1)", "seed"},
      {R"("seed": 18446744073709551615)", "seed"},
      {R"("seed": 1.5)", "seed"},
      {R"("presence_penalty": 3)", "presence_penalty"},
      {R"("frequency_penalty": -2.5)", "frequency_penalty"},
      {R"("repetition_penalty": 0)", "repetition_penalty"},
      {R"("repetition_penalty": 1000)", "repetition_penalty"},
  };
  for (const auto& [field, name] : cases) {
    std::string message;
    EXPECT_EQ(error_status(R"({"prompt": "x", )" + field + "}", false, &message), 400) << field;
    EXPECT_EQ(message.rfind(name + ": ", 0), 0u) << field << " -> " << message;
  }
  std::string message;
  error_status(R"({"prompt": "x", "temperature": 1e-300})", false, &message);
  EXPECT_EQ(message.find("no finite"), std::string::npos) << message;
  EXPECT_NE(message.find("at least 0.01"), std::string::npos) << message;
  // The edges themselves are fine: the smallest sampling temperature, greedy, top_k -1 (all).
  EXPECT_EQ(error_status(R"({"prompt": "x", "temperature": 0.01, "top_p": 1, "top_k": -1, "seed": 0})", false), 0);
}

TEST(CompletionRequest, TextOnlyContentPartsAreJoinedWithNewlines) {
  const CompletionRequest chat = parse_completion_request(
      R"({"messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                       {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]}]})",
      true);
  EXPECT_EQ(chat.conversation.messages[0]["content"], "Be brief.");
  EXPECT_EQ(chat.conversation.messages[1]["content"], "Hi\nthere");
  // With an image the parts stay: the image handling reads them.
  const CompletionRequest image = parse_completion_request(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "a.png"}},
                                                    {"type": "text", "text": "What is it?"}]}]})",
      true);
  EXPECT_TRUE(image.conversation.messages[0]["content"].is_array());
}

TEST(CompletionResponse, WholeAndChunkedAsOpenAIWritesThem) {
  const ResponseIdentity chat{"chatcmpl-1", 100, "m", true};
  const Json whole = whole_response(chat, "Paris", "stop", 10, 2);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"], (Json{{"role", "assistant"}, {"content", "Paris"}}));
  EXPECT_EQ(whole["usage"], (Json{{"prompt_tokens", 10}, {"completion_tokens", 2}, {"total_tokens", 12}}));
  EXPECT_EQ(text_chunk(chat, "Par")["choices"][0]["delta"], (Json{{"content", "Par"}}));
  EXPECT_EQ(text_chunk(chat, "", "stop")["choices"][0]["delta"], Json::object());
  EXPECT_EQ(role_chunk(chat)["choices"][0]["delta"]["role"], "assistant");
  const ResponseIdentity text{"cmpl-2", 100, "m", false};
  EXPECT_EQ(text_chunk(text, "x")["object"], "text_completion");
  EXPECT_EQ(usage_chunk(text, 1, 2)["choices"], Json::array());
  EXPECT_EQ(sse_event(Json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(json_text(Json("\xff")), "\"\xef\xbf\xbd\"");  // not UTF-8: U+FFFD, never an exception
}

TEST(ServerMetrics, HistogramsAreCumulativeWithSumAndCount) {
  Histogram histogram({0.1, 1});
  for (double value : {0.05, 0.1, 0.5, 3.0}) histogram.observe(value);
  EXPECT_EQ(histogram.text("h"),
            "h_bucket{le=\"0.1\"} 2\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 4\nh_sum 3.65\nh_count 4\n");
}

TEST(ServerMetrics, TokensPerSecondOverTheLastWholeSeconds) {
  ServerMetrics metrics;
  const auto start = ServerMetrics::Clock::now();
  metrics.tokens_generated(30, start + std::chrono::milliseconds(500));
  metrics.tokens_generated(50, start + std::chrono::milliseconds(1500));
  metrics.request_done("/v1/completions", 200);
  const std::string text = metrics.text(2, 1, start + std::chrono::milliseconds(2200));
  EXPECT_NE(text.find("canrun_generation_tokens_per_second 40\n"), std::string::npos) << text;
  EXPECT_NE(text.find("canrun_generation_tokens_total 80\n"), std::string::npos);
  EXPECT_NE(text.find("canrun_queue_length 2\n"), std::string::npos);
  EXPECT_NE(text.find("canrun_running_sequences 1\n"), std::string::npos);
  EXPECT_NE(text.find("canrun_requests_total{route=\"/v1/completions\",status=\"200\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace canrun
