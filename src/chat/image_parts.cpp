#include "chat/image_parts.h"

#include "util/error.h"

namespace canrun {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string image_file(const OrderedJson& block, const std::string& where) {
  const OrderedJson* source = nullptr;
  if (block["type"] == "image_url") {
    if (block.contains("image_url") && block["image_url"].is_object() && block["image_url"].contains("url"))
      source = &block["image_url"]["url"];
    else if (block.contains("image_url"))
      source = &block["image_url"];
  } else {
    for (const char* key : {"image", "url", "path"})
      if (block.contains(key)) {
        source = &block[key];
        break;
      }
  }
  if (source == nullptr || !source->is_string())
    fail(ErrorKind::kUsage, where + ": an image block needs the image's file as a string (\"image\", \"url\", "
                                    "\"path\", or image_url.url)");
  std::string file = source->get<std::string>();
  if (file.rfind("file://", 0) == 0) file = file.substr(7);
  if (file.rfind("data:", 0) == 0 || file.find("://") != std::string::npos)
    fail(ErrorKind::kUsage,
         where + ": '" + file.substr(0, 40) + "' is not a local file (canrun reads images from files)");
  if (file.empty()) fail(ErrorKind::kUsage, where + ": the image's file name is empty");
  return file;
}

}  // namespace

std::vector<std::string> image_files(const OrderedJson& messages) {
  std::vector<std::string> files;
  for (size_t m = 0; m < messages.size(); ++m) {
    const OrderedJson& message = messages[m];
    if (!message.is_object() || !message.contains("content") || !message["content"].is_array()) continue;
    const OrderedJson& content = message["content"];
    for (size_t b = 0; b < content.size(); ++b) {
      const OrderedJson& block = content[b];
      if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) continue;
      if (block["type"] != "image" && block["type"] != "image_url") continue;
      files.push_back(image_file(block, "message " + std::to_string(m) + ": content block " + std::to_string(b)));
    }
  }
  return files;
}

OrderedJson user_message_with_images(size_t images, const std::string& text) {
  OrderedJson content = OrderedJson::array();
  for (size_t i = 0; i < images; ++i) content.push_back({{"type", "image"}});
  content.push_back({{"type", "text"}, {"text", text}});
  return {{"role", "user"}, {"content", content}};
}

}  // namespace canrun
