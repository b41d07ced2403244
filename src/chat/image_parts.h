// Images in a conversation: the image content blocks of its messages, as transformers' chat
// templates and processors take them ({"type": "image", "image" | "url" | "path": FILE}) or as
// OpenAI's API sends them ({"type": "image_url", "image_url": {"url": FILE}}).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace canrun {

// The files of the messages' image blocks, in order; "file://" is dropped. Throws
// Error(kUsage) naming the message and block when one names no local file (a data: or http URL).
std::vector<std::string> image_files(const nlohmann::ordered_json& messages);

// A user message of `images` image blocks, then `text`.
nlohmann::ordered_json user_message_with_images(size_t images, const std::string& text);

}  // namespace canrun
