#include "chat/conversation_file.h"

#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson read_json_list(const std::string& path, const std::string& option) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const Error& error) {
    fail(ErrorKind::kUsage, option + " " + error.what());
  }
  const OrderedJson json = parse_json<OrderedJson>(text, option + " " + path, ErrorKind::kUsage);
  if (!json.is_array()) fail(ErrorKind::kUsage, option + " " + path + ": expected a JSON list, got " + json.type_name());
  return json;
}

void check_content(const OrderedJson& message, const std::string& where) {
  if (!message.contains("content")) {
    if (!message.contains("tool_calls")) fail(ErrorKind::kUsage, where + ": has no \"content\"");
    return;
  }
  const OrderedJson& content = message["content"];
  if (content.is_string() || (content.is_null() && message.contains("tool_calls"))) return;
  if (!content.is_array())
    fail(ErrorKind::kUsage, where + ": \"content\" must be a string or a list of content blocks, not " +
                                std::string(content.type_name()));
  for (size_t i = 0; i < content.size(); ++i) {
    const OrderedJson& block = content[i];
    const std::string at = where + ": content block " + std::to_string(i);
    if (!block.is_object() || !block.contains("type") || !block["type"].is_string())
      fail(ErrorKind::kUsage, at + ": expected an object with a string \"type\"");
    if (block["type"] == "text" && !(block.contains("text") && block["text"].is_string()))
      fail(ErrorKind::kUsage, at + ": a text block needs a string \"text\"");
  }
}

}  // namespace

void check_messages(const OrderedJson& messages, const std::string& origin) {
  if (!messages.is_array()) fail(ErrorKind::kUsage, origin + ": expected a JSON list, got " + messages.type_name());
  if (messages.empty()) fail(ErrorKind::kUsage, origin + ": the list has no messages");
  for (size_t i = 0; i < messages.size(); ++i) {
    const OrderedJson& message = messages[i];
    const std::string where = origin + ": entry " + std::to_string(i);
    if (!message.is_object()) fail(ErrorKind::kUsage, where + ": expected an object with \"role\" and \"content\", got " +
                                                          std::string(message.type_name()));
    if (!message.contains("role") || !message["role"].is_string())
      fail(ErrorKind::kUsage, where + ": \"role\" must be a string (system, user, assistant, tool)");
    check_content(message, where + " (" + message["role"].get<std::string>() + ")");
  }
}

OrderedJson read_messages_file(const std::string& path) {
  const OrderedJson messages = read_json_list(path, "--messages");
  check_messages(messages, "--messages " + path);
  return messages;
}

OrderedJson read_tools_file(const std::string& path) {
  const OrderedJson tools = read_json_list(path, "--tools");
  for (size_t i = 0; i < tools.size(); ++i)
    if (!tools[i].is_object())
      fail(ErrorKind::kUsage, "--tools " + path + ": entry " + std::to_string(i) + ": expected a JSON schema object");
  return tools;
}

Conversation make_conversation(const std::optional<std::string>& messages_file, const std::optional<std::string>& system,
                               const std::optional<std::string>& user, const std::optional<std::string>& tools_file) {
  Conversation conversation;
  if (messages_file) {
    if (system || user) fail(ErrorKind::kUsage, "--messages holds the whole conversation: give it without --system/--user");
    conversation.messages = read_messages_file(*messages_file);
  } else {
    if (!user) fail(ErrorKind::kUsage, "--chat needs --user TEXT or --messages FILE");
    if (system) conversation.messages.push_back({{"role", "system"}, {"content", *system}});
    conversation.messages.push_back({{"role", "user"}, {"content", *user}});
  }
  if (tools_file) conversation.tools = read_tools_file(*tools_file);
  continue_or_prompt(conversation);
  return conversation;
}

void continue_or_prompt(Conversation& conversation) {
  const bool prefill = conversation.messages.back()["role"] == "assistant";
  conversation.continue_final_message = prefill;
  conversation.add_generation_prompt = !prefill;
}

}  // namespace canrun
