// canrun's chat template renderer against transformers 5.23.0 (jinja2 3.1.6): every real template
// llama.cpp keeps for its tests (llama-cpp-python 0.3.36 sdist, fetched by
// tools/fetch_chat_templates.sh) times the conversations of
// tests/goldens/chat_templates/renders.json (made by tools/make_chat_template_goldens.py).
// A render must be byte-equal (length and xxh3-128 of the UTF-8 text); where transformers
// raises, canrun must refuse too, with the template's own message when the template raised it.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

const fs::path kSourceDir = CANRUN_SOURCE_DIR;
const fs::path kGoldens = kSourceDir / "tests/goldens/chat_templates/renders.json";
const fs::path kTemplates = kSourceDir / "models/chat-templates/llama-cpp-python-0.3.36";
const fs::path kArtifacts = kSourceDir / "test-artifacts/chat-templates";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string xxh3_128_hex(const std::string& text) {
  const XXH128_hash_t hash = XXH3_128bits(text.data(), text.size());
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return hex;
}

std::tm frozen_time(const std::string& iso) {
  std::tm time{};
  std::istringstream(iso) >> std::get_time(&time, "%Y-%m-%dT%H:%M:%S");
  time.tm_isdst = -1;
  std::mktime(&time);  // fills in the weekday and day of the year
  return time;
}

Conversation conversation_of(const OrderedJson& entry) {
  Conversation conversation;
  conversation.messages = entry.at("messages");
  if (!entry.at("tools").is_null()) conversation.tools = entry.at("tools");
  conversation.add_generation_prompt = entry.at("add_generation_prompt").get<bool>();
  conversation.continue_final_message = entry.at("continue_final_message").get<bool>();
  return conversation;
}

TEST(ChatTemplateParity, EveryTemplateAndConversationMatchesTransformers) {
  ASSERT_TRUE(fs::is_directory(kTemplates)) << kTemplates << " is missing: run bash tools/fetch_chat_templates.sh";
  const OrderedJson goldens = OrderedJson::parse(read(kGoldens));
  std::map<std::string, std::string> special_tokens;
  for (const auto& [key, value] : goldens.at("special_tokens").items()) special_tokens[key] = value.get<std::string>();
  const std::tm now = frozen_time(goldens.at("now").get<std::string>());

  int equal = 0, refused_alike = 0;
  std::vector<std::string> mismatches;
  for (const OrderedJson& render : goldens.at("renders")) {
    const std::string name = render.at("template").get<std::string>();
    const std::string conversation_name = render.at("conversation").get<std::string>();
    const std::string label = name + " × " + conversation_name;
    const Conversation conversation = conversation_of(goldens.at("conversations").at(conversation_name));
    std::string text;
    std::optional<Error> refusal;
    try {
      const ChatTemplate chat(read(kTemplates / name), name, special_tokens);
      text = chat.render(conversation, [&] { return now; });
    } catch (const Error& error) {
      refusal = error;
    }
    if (render.contains("error")) {
      const std::string expected = render.at("error").get<std::string>();
      if (!refusal) {
        mismatches.push_back(label + ": transformers raises '" + expected + "', canrun rendered");
      } else if (render.at("raised_by_template").get<bool>() &&
                 std::string(refusal->what()).find(expected) == std::string::npos) {
        mismatches.push_back(label + ": the template's message '" + expected + "' is not in '" + refusal->what() + "'");
      } else {
        ++refused_alike;
      }
      continue;
    }
    if (refusal) {
      mismatches.push_back(label + ": canrun refuses: " + refusal->what());
      continue;
    }
    if (static_cast<int64_t>(text.size()) == render.at("length").get<int64_t>() &&
        xxh3_128_hex(text) == render.at("xxh3_128").get<std::string>()) {
      ++equal;
      continue;
    }
    const fs::path written = kArtifacts / fs::path(name).stem() / (conversation_name + ".txt");
    fs::create_directories(written.parent_path());
    std::ofstream(written, std::ios::binary) << text;
    mismatches.push_back(label + ": differs from transformers (canrun's text: " + written.string() +
                         "; transformers': tools/make_chat_template_goldens.py --texts DIR)");
  }
  std::string report;
  for (const std::string& mismatch : mismatches) report += "\n  " + mismatch;
  EXPECT_TRUE(mismatches.empty()) << mismatches.size() << " of " << goldens.at("renders").size()
                                  << " renders differ:" << report;
  std::printf("chat templates: %d renders byte-equal, %d refused as transformers refuses, %zu differ\n", equal,
              refused_alike, mismatches.size());
}

}  // namespace
}  // namespace canrun
