// Where a model folder's chat template comes from and what it is given, as transformers 5.23's
// tokenizer loading and apply_chat_template do it; and the messages files the CLI reads.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/chat_template.h"
#include "chat/conversation_file.h"
#include "util/error.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

Conversation user_says(const std::string& text) {
  Conversation conversation;
  conversation.messages.push_back({{"role", "user"}, {"content", text}});
  return conversation;
}

const char* const kEcho = "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                          "{% if add_generation_prompt %}[assistant]{% endif %}";

TEST(ChatTemplate, TheJinjaFileComesBeforeTokenizerConfigAndSpecialTokensAreVariables) {
  TemporaryDirectory dir("canrun-chat-");
  write(dir.path() / "tokenizer_config.json",
        R"({"chat_template": "from the config", "bos_token": {"content": "<B>", "__type": "AddedToken"}, "eos_token": "<E>"})");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path().string()).render(user_says("x")), "from the config");
  write(dir.path() / "chat_template.jinja", kEcho);
  const ChatTemplate chat = ChatTemplate::from_model_dir(dir.path().string());
  EXPECT_EQ(chat.origin(), (dir.path() / "chat_template.jinja").string());
  EXPECT_EQ(chat.render(user_says("hi")), "<B>[user]hi[assistant]");
}

TEST(ChatTemplate, NamedTemplatesPickDefaultOrToolUse) {
  TemporaryDirectory dir("canrun-chat-");
  write(dir.path() / "tokenizer_config.json",
        R"({"chat_template": [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "{{ tools | length }} tools"}]})");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path().string()).render(user_says("x")), "plain");
  Conversation with_tools = user_says("x");
  with_tools.tools = OrderedJson::array({{{"type", "function"}}});
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path().string(), std::nullopt, true).render(with_tools), "1 tools");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path().string(), "tool_use").render(with_tools), "1 tools");
  try {
    ChatTemplate::from_model_dir(dir.path().string(), "missing");
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("default, tool_use"), std::string::npos) << error.what();
  }
}

TEST(ChatTemplate, AFolderWithoutATemplateOrWithABrokenOneIsNamed) {
  TemporaryDirectory dir("canrun-chat-");
  write(dir.path() / "tokenizer_config.json", "{}");
  try {
    ChatTemplate::from_model_dir(dir.path().string());
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kCheckpoint);
    EXPECT_NE(std::string(error.what()).find("no chat template"), std::string::npos) << error.what();
  }
  write(dir.path() / "chat_template.jinja", "fine\n{% for m in messages %}\n{% macro %}");
  try {
    ChatTemplate::from_model_dir(dir.path().string());
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("chat_template.jinja, line 3"), std::string::npos) << error.what();
  }
}

// An oversized template is refused by its size before it is read or parsed (a 50 MiB one cost
// 34 s and 6.8 GB of parsing), naming where it came from and the bound.
TEST(ChatTemplate, ATemplateLargerThanTheBoundIsRefusedBeforeItIsParsed) {
  TemporaryDirectory dir("canrun-chat-");
  const std::string oversized(jinja::kMaxTemplateBytes + 1, 'x');
  const auto error_for = [&] {
    try {
      ChatTemplate::from_model_dir(dir.path().string());
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  write(dir.path() / "tokenizer_config.json", OrderedJson{{"chat_template", oversized}}.dump());
  EXPECT_EQ(error_for(), (dir.path() / "tokenizer_config.json").string() + ": chat_template: the template is 1048577 bytes, "
                         "more than the 1 MiB canrun parses");
  write(dir.path() / "chat_template.jinja", oversized);
  EXPECT_EQ(error_for(), (dir.path() / "chat_template.jinja").string() + ": 1048577 bytes, larger than the 1 MiB canrun "
                         "reads of such a file");
  write(dir.path() / "chat_template.jinja", std::string(jinja::kMaxTemplateBytes, 'x'));
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.path().string()).render(user_says("x")).size(), jinja::kMaxTemplateBytes);
}

TEST(ChatTemplate, RaiseExceptionIsTheTemplatesOwnMessage) {
  const ChatTemplate chat("{% if messages[0].role == 'user' %}{{ raise_exception('Conversations must start with a system message') }}{% endif %}",
                          "strict.jinja", {});
  try {
    chat.render(user_says("x"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_EQ(std::string(error.what()), "strict.jinja refuses this conversation: Conversations must start with a system message");
  }
}

TEST(ChatTemplate, APrefillEndsWhereItsTextEnds) {
  const ChatTemplate chat("{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}", "t", {});
  Conversation conversation = user_says("Write a haiku.");
  conversation.messages.push_back({{"role", "assistant"}, {"content", "Waves fold"}});
  conversation.add_generation_prompt = false;
  conversation.continue_final_message = true;
  EXPECT_EQ(chat.render(conversation), "<user>Write a haiku.</user>\n<assistant>Waves fold");
}

TEST(ConversationFile, BadEntriesAreNamed) {
  TemporaryDirectory dir("canrun-messages-");
  const auto error_for = [&](const std::string& json) -> std::string {
    write(dir.path() / "m.json", json);
    try {
      read_messages_file((dir.path() / "m.json").string());
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kUsage);
      return error.what();
    }
    return "";
  };
  EXPECT_NE(error_for(R"({"role": "user"})").find("expected a JSON list"), std::string::npos);
  EXPECT_NE(error_for("[").find("invalid JSON at byte"), std::string::npos);
  EXPECT_NE(error_for("[]").find("no messages"), std::string::npos);
  EXPECT_NE(error_for(R"([{"role": "user", "content": "a"}, "hello"])").find("entry 1: expected an object"), std::string::npos);
  EXPECT_NE(error_for(R"([{"content": "a"}])").find("entry 0: \"role\" must be a string"), std::string::npos);
  EXPECT_NE(error_for(R"([{"role": "user", "content": 3}])").find("entry 0 (user): \"content\" must be"), std::string::npos);
  EXPECT_NE(error_for(R"([{"role": "user", "content": [{"type": "text"}]}])").find("content block 0"), std::string::npos);
  EXPECT_EQ(error_for(R"([{"role": "assistant", "content": null, "tool_calls": []}])"), "");
  EXPECT_NE(error_for(std::string(100000, '[') + std::string(100000, ']')).find("nested deeper than 64"), std::string::npos);
}

TEST(ConversationFile, ATrailingAssistantMessageIsContinued) {
  TemporaryDirectory dir("canrun-messages-");
  write(dir.path() / "m.json", R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])");
  const Conversation prefill = make_conversation((dir.path() / "m.json").string(), std::nullopt, std::nullopt, std::nullopt);
  EXPECT_TRUE(prefill.continue_final_message);
  EXPECT_FALSE(prefill.add_generation_prompt);
  const Conversation asked = make_conversation(std::nullopt, std::string("sys"), std::string("question"), std::nullopt);
  EXPECT_EQ(asked.messages.size(), 2u);
  EXPECT_TRUE(asked.add_generation_prompt);
  EXPECT_THROW(make_conversation(std::nullopt, std::string("sys"), std::nullopt, std::nullopt), Error);
}

}  // namespace
}  // namespace canrun
