// A model folder's chat template, rendered as transformers' apply_chat_template renders it:
// chat_template.jinja (and additional_chat_templates/*.jinja) before the `chat_template` of
// tokenizer_config.json (a string, or a list of named templates); the named special tokens as
// variables; messages with null fields dropped and reasoning copied under the names templates
// read; an assistant prefill continued where its text ends.
#pragma once

#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jinja/template.h"

namespace canrun {

struct Conversation {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // OpenAI-style role/content objects
  std::optional<nlohmann::ordered_json> tools;                       // JSON schemas of functions
  bool add_generation_prompt = true;
  // The last (assistant) message is a prefill the model continues: no end-of-turn after it.
  bool continue_final_message = false;
};

class ChatTemplate {
 public:
  // The folder's template: by `name` when given, else "tool_use" for a conversation with tools
  // when the folder has one, else its default. Throws Error(kCheckpoint) naming the file when
  // there is none or it does not parse (with the template's line).
  static ChatTemplate from_model_dir(const std::string& model_dir, const std::optional<std::string>& name = std::nullopt,
                                     bool with_tools = false);

  // `origin` names the template in messages; `special_tokens` are bos_token, eos_token, ...
  ChatTemplate(const std::string& source, std::string origin, std::map<std::string, std::string> special_tokens);

  // Throws Error(kUsage) with the template's own message when it calls raise_exception, and
  // Error(kUnsupportedOption) naming the template and line for anything it cannot render.
  std::string render(const Conversation& conversation, std::function<std::tm()> now = local_time) const;

  const std::string& origin() const { return origin_; }
  static std::tm local_time();

 private:
  std::string source_;
  std::string origin_;
  std::map<std::string, std::string> special_tokens_;
  jinja::Template template_;
};

}  // namespace canrun
