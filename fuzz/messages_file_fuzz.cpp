// A --messages file, read into a conversation and rendered by a template that walks every
// message's role, content blocks and tool calls.
#include "chat/chat_template.h"
#include "chat/conversation_file.h"
#include "fuzz_support.h"

namespace {

constexpr const char* kTemplate = R"({%- for m in messages -%}
<{{ m.role }}>{% if m.content is string %}{{ m.content }}{% elif m.content %}{% for part in m.content %}{{ part.text }}{% endfor %}{% endif %}
{%- for call in m.tool_calls or [] %}[{{ call.function.name }} {{ call.function.arguments | tojson }}]{% endfor %}
{%- endfor -%}
{%- if add_generation_prompt %}<assistant>{% endif %})";

std::tm fixed_time() { return std::tm{}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const canrun::ChatTemplate chat(kTemplate, "walk.jinja", {});
  const std::string path = canrun::fuzz::write_input("messages.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::Conversation conversation = canrun::make_conversation(path, std::nullopt, std::nullopt, std::nullopt);
    (void)chat.render(conversation, fixed_time);
  });
  return 0;
}
