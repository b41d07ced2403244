#include "chat/chat_template.h"

#include <chrono>
#include <filesystem>

#include "jinja/builtins.h"
#include "jinja/template_error.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace fs = std::filesystem;
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr const char* kNamedSpecialTokens[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                               "pad_token", "cls_token", "mask_token"};
// What transformers appends to a prefill to find where its text ends in the rendered chat.
constexpr std::string_view kContinueTag = "CONTINUE_FINAL_MESSAGE_TAG ";
constexpr const char* kReasoningFields[] = {"reasoning_content", "thinking", "reasoning"};

// A special token in tokenizer_config.json: a string, or an AddedToken object with "content".
std::optional<std::string> token_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string())
    return value["content"].get<std::string>();
  return std::nullopt;
}

// Transformers' _alias_reasoning_fields: the first non-null of the reasoning names is copied to
// `thinking` (first) and `reasoning_content` (last), keeping the message's own order between.
OrderedJson alias_reasoning(const OrderedJson& message) {
  const OrderedJson* reasoning = nullptr;
  for (const char* field : kReasoningFields)
    if (message.contains(field) && !message[field].is_null()) {
      reasoning = &message[field];
      break;
    }
  if (!reasoning) return message;
  OrderedJson out = OrderedJson::object();
  out["thinking"] = *reasoning;
  for (const auto& [key, value] : message.items()) out[key] = value;
  out["reasoning_content"] = *reasoning;
  return out;
}

[[noreturn]] void template_failure(const std::string& origin, const jinja::TemplateError& error) {
  if (error.cause() == jinja::TemplateError::Cause::kRaised)
    fail(ErrorKind::kUsage, origin + " refuses this conversation: " + error.what());
  const std::string where = error.line() > 0 ? origin + ", line " + std::to_string(error.line()) : origin;
  fail(error.cause() == jinja::TemplateError::Cause::kSyntax ? ErrorKind::kCheckpoint : ErrorKind::kUnsupportedOption,
       where + ": " + error.what());
}

}  // namespace

std::tm ChatTemplate::local_time() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm out{};
  localtime_r(&now, &out);
  return out;
}

ChatTemplate::ChatTemplate(const std::string& source, std::string origin, std::map<std::string, std::string> special_tokens)
    : source_(source), origin_(std::move(origin)), special_tokens_(std::move(special_tokens)), template_([&] {
        try {
          return jinja::Template(source);
        } catch (const jinja::TemplateError& error) {
          template_failure(origin_, error);
        }
      }()) {}

ChatTemplate ChatTemplate::from_model_dir(const std::string& model_dir, const std::optional<std::string>& name,
                                          bool with_tools) {
  const fs::path dir(model_dir);
  const fs::path config_path = dir / "tokenizer_config.json";
  const Json config = fs::exists(config_path) ? read_json_file(config_path.string(), ErrorKind::kCheckpoint) : Json::object();

  // name -> (origin, source), as transformers collects them.
  std::map<std::string, std::pair<std::string, std::string>> templates;
  if (fs::exists(dir / "chat_template.jinja"))
    templates["default"] = {(dir / "chat_template.jinja").string(),
                            read_text_file((dir / "chat_template.jinja").string(), jinja::kMaxTemplateBytes)};
  if (fs::is_directory(dir / "additional_chat_templates"))
    for (const auto& entry : fs::directory_iterator(dir / "additional_chat_templates"))
      if (entry.path().extension() == ".jinja")
        templates[entry.path().stem().string()] = {entry.path().string(),
                                                   read_text_file(entry.path().string(), jinja::kMaxTemplateBytes)};
  if (templates.empty() && config.contains("chat_template")) {
    const Json& field = config["chat_template"];
    const std::string origin = config_path.string() + ": chat_template";
    if (field.is_string()) {
      templates["default"] = {origin, field.get<std::string>()};
    } else if (field.is_array()) {
      for (size_t i = 0; i < field.size(); ++i) {
        const Json& entry = field[i];
        if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("template") ||
            !entry["template"].is_string())
          fail(ErrorKind::kCheckpoint, origin + "[" + std::to_string(i) + "]: expected {\"name\": string, \"template\": string}");
        const std::string template_name = entry["name"].get<std::string>();
        templates[template_name] = {origin + " '" + template_name + "'", entry["template"].get<std::string>()};
      }
    } else if (!field.is_null()) {
      fail(ErrorKind::kCheckpoint, origin + ": expected a string or a list of named templates");
    }
  }
  if (templates.empty())
    fail(ErrorKind::kCheckpoint, model_dir + ": the folder has no chat template (no chat_template.jinja, and no "
                                             "chat_template in tokenizer_config.json)");
  std::string chosen;
  std::string names;
  for (const auto& [template_name, unused] : templates) names += (names.empty() ? "" : ", ") + template_name;
  if (name) {
    if (!templates.count(*name)) fail(ErrorKind::kUsage, "--chat-template: " + model_dir + " has no template '" + *name + "' (it has: " + names + ")");
    chosen = *name;
  } else if (with_tools && templates.count("tool_use")) {
    chosen = "tool_use";
  } else if (templates.count("default")) {
    chosen = "default";
  } else {
    fail(ErrorKind::kUsage, model_dir + " has several chat templates and none named default; choose one with "
                                        "--chat-template (it has: " + names + ")");
  }

  std::map<std::string, std::string> special_tokens;
  for (const char* field : kNamedSpecialTokens)
    if (config.contains(field))
      if (auto text = token_text(config[field])) special_tokens[field] = *text;
  if (config.contains("extra_special_tokens") && config["extra_special_tokens"].is_object())
    for (const auto& [key, value] : config["extra_special_tokens"].items())
      if (auto text = token_text(value)) special_tokens[key] = *text;
  const auto& [origin, source] = templates.at(chosen);
  return ChatTemplate(source, origin, std::move(special_tokens));
}

std::string ChatTemplate::render(const Conversation& conversation, std::function<std::tm()> now) const {
  if (!conversation.messages.is_array() || conversation.messages.empty())
    fail(ErrorKind::kUsage, "the conversation has no messages");
  if (conversation.continue_final_message && conversation.add_generation_prompt)
    fail(ErrorKind::kUsage, "a prefilled assistant message is continued, so no generation prompt is added after it");

  // What apply_chat_template hands the template: null fields dropped, reasoning aliased.
  OrderedJson messages = OrderedJson::array();
  for (const OrderedJson& message : conversation.messages) {
    OrderedJson kept = OrderedJson::object();
    for (const auto& [key, value] : message.items())
      if (!value.is_null()) kept[key] = value;
    messages.push_back(alias_reasoning(kept));
  }

  std::string final_text;
  if (conversation.continue_final_message) {
    OrderedJson& last = messages.back();
    const std::string field = "content";
    if (!last.contains(field))
      fail(ErrorKind::kUsage, "the prefilled final message has no \"content\" to continue");
    if (source_.find(field) == std::string::npos)
      fail(ErrorKind::kUsage, origin_ + " does not read a message's content, so a prefill cannot be continued");
    OrderedJson& content = last[field];
    if (content.is_string()) {
      final_text = content.get<std::string>();
      content = final_text + std::string(kContinueTag);
    } else if (content.is_array()) {
      bool found = false;
      for (auto block = content.rbegin(); block != content.rend() && !found; ++block)
        if (block->is_object() && block->contains("text") && (*block)["text"].is_string()) {
          final_text = (*block)["text"].get<std::string>();
          (*block)["text"] = final_text + std::string(kContinueTag);
          found = true;
        }
      if (!found) fail(ErrorKind::kUsage, "the prefilled final message has no text to continue");
    }
  }

  std::vector<std::pair<std::string, jinja::Value>> variables;
  for (const auto& [key, value] : special_tokens_) variables.emplace_back(key, jinja::Value(value));
  variables.emplace_back("messages", jinja::Value::from_json(messages));
  variables.emplace_back("tools", conversation.tools ? jinja::Value::from_json(*conversation.tools) : jinja::Value::none());
  variables.emplace_back("documents", jinja::Value::none());
  variables.emplace_back("add_generation_prompt", jinja::Value(conversation.add_generation_prompt));

  std::string rendered;
  try {
    rendered = template_.render(variables, std::move(now));
  } catch (const jinja::TemplateError& error) {
    template_failure(origin_, error);
  }
  if (!conversation.continue_final_message) return rendered;
  const std::string tag = jinja::python_strip(std::string(kContinueTag), true, true);
  if (rendered.find(jinja::python_strip(final_text, true, true)) == std::string::npos || rendered.find(tag) == std::string::npos)
    fail(ErrorKind::kUsage, origin_ + " drops part of the prefilled final message, so it cannot be continued");
  const size_t at = rendered.rfind(tag);
  if (rendered.compare(at, kContinueTag.size(), kContinueTag) == 0) return rendered.substr(0, at);
  return jinja::python_strip(rendered.substr(0, at), false, true);
}

}  // namespace canrun
