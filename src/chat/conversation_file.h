// Conversations from the command line: an OpenAI-style messages file (a JSON list of
// {"role", "content", ...} objects, as transformers' apply_chat_template takes them), a tools
// file (a JSON list of function schemas), or a system and a user message.
#pragma once

#include <optional>
#include <string>

#include "chat/chat_template.h"

namespace canrun {

// Throws Error(kUsage) naming the file and the entry at fault: not a list, an entry that is not
// an object, a role that is not a string, content that is neither text, a list of content
// blocks nor null beside tool_calls.
nlohmann::ordered_json read_messages_file(const std::string& path);
// The same checks of messages from elsewhere (an API request); `origin` begins each message.
void check_messages(const nlohmann::ordered_json& messages, const std::string& origin);
nlohmann::ordered_json read_tools_file(const std::string& path);

// The conversation to render: the messages file, or the system and user texts, continued or
// prompted as continue_or_prompt says.
Conversation make_conversation(const std::optional<std::string>& messages_file, const std::optional<std::string>& system,
                               const std::optional<std::string>& user, const std::optional<std::string>& tools_file);

// A conversation ending with an assistant message is a prefill the model continues; any other
// gets the template's generation prompt.
void continue_or_prompt(Conversation& conversation);

}  // namespace canrun
