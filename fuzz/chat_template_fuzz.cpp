// A chat template's source, parsed and rendered with a conversation that has every part a
// template reads: system, user and assistant turns, a tool call and its answer, tools, the
// special tokens.
#include "chat/chat_template.h"
#include "fuzz_support.h"

namespace {

const canrun::Conversation& conversation() {
  static const canrun::Conversation made = [] {
    canrun::Conversation c;
    c.messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
      {"role": "assistant", "content": null, "reasoning_content": "Ask the tool.",
       "tool_calls": [{"type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "content": "{\"celsius\": 21}"},
      {"role": "assistant", "content": "21 °C."},
      {"role": "user", "content": "Thanks"}])");
    c.tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "weather",
      "description": "Weather now", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
    return c;
  }();
  return made;
}

std::tm fixed_time() {
  std::tm time{};
  time.tm_year = 126;
  time.tm_mday = 1;
  return time;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::ChatTemplate chat(std::string(reinterpret_cast<const char*>(data), size), "chat_template.jinja",
                                    {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
    (void)chat.render(conversation(), fixed_time);
  });
  return 0;
}
