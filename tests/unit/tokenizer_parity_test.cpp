// canrun's tokenizer against the goldens tools/make_tokenizer_goldens.py wrote with
// the Python `tokenizers` library: same ids, tokens and decoded text, case by case.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = CANRUN_SOURCE_DIR;
const fs::path kGoldenDir = kSourceDir / "tests" / "goldens" / "tokenizers";

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  if (fs::is_directory(kGoldenDir)) {
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Non-ASCII and control bytes as \xNN, so a message shows exactly what differs.
std::string visible(const std::string& text) {
  std::ostringstream out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out << c;
    } else {
      static const char* kHex = "0123456789abcdef";
      out << "\\x" << kHex[c >> 4] << kHex[c & 15];
    }
  }
  return out.str();
}

template <typename T>
std::string show(const T& value) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, std::string>) {
    out << '"' << visible(value) << '"';
  } else if constexpr (std::is_same_v<T, char>) {
    out << "'" << visible(std::string(1, value)) << "'";
  } else {
    out << value;
  }
  return out.str();
}

// Empty when equal; otherwise where the two first differ and what each holds there.
template <typename Sequence>
std::string first_difference(const Sequence& expected, const Sequence& actual) {
  const size_t common = std::min(expected.size(), actual.size());
  size_t i = 0;
  while (i < common && expected[i] == actual[i]) ++i;
  if (i == common && expected.size() == actual.size()) return "";
  std::ostringstream out;
  out << "first difference at position " << i << ": expected "
      << (i < expected.size() ? show(expected[i]) : std::string("<end>")) << ", got "
      << (i < actual.size() ? show(actual[i]) : std::string("<end>")) << " (lengths " << expected.size()
      << " and " << actual.size() << ")";
  return out.str();
}

class TokenizerParityTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    golden_ = read_json_file((kGoldenDir / (GetParam() + ".json")).string(), ErrorKind::kIo);
    tokenizer_.emplace(Tokenizer::from_file((kSourceDir / golden_["tokenizer"].get<std::string>()).string()));
  }

  Json golden_;
  std::optional<Tokenizer> tokenizer_;
};

TEST_P(TokenizerParityTest, EncodeAndDecodeMatchTheLibrary) {
  ASSERT_FALSE(golden_["cases"].empty());
  for (const Json& c : golden_["cases"]) {
    const std::string text = c["text"].get<std::string>();
    for (const bool add_special : {true, false}) {
      const Json& expected = c[add_special ? "with_special" : "without_special"];
      const std::string where = "case '" + c["name"].get<std::string>() + "' (text \"" + visible(text) +
                                "\", add_special_tokens=" + (add_special ? "true" : "false") + ")";
      const Tokenizer::Encoding encoding = tokenizer_->encode(text, add_special);
      const auto ids = expected["ids"].get<std::vector<int32_t>>();
      const auto tokens = expected["tokens"].get<std::vector<std::string>>();
      EXPECT_EQ(ids, encoding.ids) << where << ": ids: " << first_difference(ids, encoding.ids);
      EXPECT_EQ(tokens, encoding.tokens)
          << where << ": tokens: " << first_difference(tokens, encoding.tokens);

      for (const bool skip : {true, false}) {
        const std::string want =
            expected[skip ? "decode_skip_special" : "decode_keep_special"].get<std::string>();
        const std::string got = tokenizer_->decode(ids, skip);
        EXPECT_EQ(want, got) << where << ": decode(skip_special_tokens=" << (skip ? "true" : "false")
                             << "): byte " << first_difference(want, got);
      }
    }
  }
}

TEST_P(TokenizerParityTest, VocabularyMatchesTheLibrary) {
  EXPECT_EQ(golden_["vocab_size"].get<size_t>(), tokenizer_->vocab_size());
  for (const Json& added : golden_["added_tokens"]) {
    const std::string content = added["content"].get<std::string>();
    const auto id = added["id"].get<int32_t>();
    EXPECT_EQ(std::optional<int32_t>(id), tokenizer_->token_to_id(content))
        << "added token " << visible(content);
    EXPECT_EQ(added["special"].get<bool>(), tokenizer_->is_special(id)) << "added token " << visible(content);
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, TokenizerParityTest, testing::ValuesIn(golden_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(TokenizerGoldens, AllStylesArePresent) {
  const std::vector<std::string> names = golden_names();
  for (const char* style : {"gpt2", "llama3", "sentencepiece", "llama2", "bert"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), style), names.end()) << "missing golden for " << style;
  }
}

TEST(TokenizerApi, LooksUpTokensBothWaysAndMoves) {
  Tokenizer tokenizer =
      Tokenizer::from_file((kSourceDir / "tests/fixtures/tokenizers/sentencepiece/tokenizer.json").string());
  const auto bos = tokenizer.token_to_id("<s>");
  ASSERT_TRUE(bos.has_value());
  EXPECT_EQ(std::optional<std::string>("<s>"), tokenizer.id_to_token(*bos));
  EXPECT_TRUE(tokenizer.is_special(*bos));
  EXPECT_EQ(std::nullopt, tokenizer.token_to_id("no such token"));
  EXPECT_EQ(std::nullopt, tokenizer.id_to_token(-1));
  EXPECT_EQ(std::nullopt, tokenizer.id_to_token(static_cast<int32_t>(tokenizer.vocab_size())));

  const Tokenizer moved = std::move(tokenizer);
  EXPECT_EQ(bos, moved.token_to_id("<s>"));
  EXPECT_EQ(bos, moved.encode("hi").ids.front());
}

}  // namespace
}  // namespace canrun
