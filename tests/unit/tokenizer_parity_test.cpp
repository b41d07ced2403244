// canrun's tokenizer against the goldens tools/make_tokenizer_goldens.py wrote with
// the Python `tokenizers` library: same ids, tokens, type ids, attention mask and decoded
// text, case by case, pair by pair, truncation by truncation; an error where it fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
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

// The goldens, or those that record `section` ("truncations": only some tokenizers have them).
std::vector<std::string> golden_names(const std::string& section = "") {
  std::vector<std::string> names;
  if (fs::is_directory(kGoldenDir)) {
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
      if (entry.path().extension() != ".json") continue;
      if (!section.empty()) {
        std::ifstream file(entry.path());
        const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        if (text.find("\n \"" + section + "\": [") == std::string::npos) continue;
      }
      names.push_back(entry.path().stem().string());
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

using TruncationStrategy = Tokenizer::Truncation::Strategy;

// Checks what `encode` gives against one golden record: an encoding and its decodes, or the
// library's error.
void expect_encoding(const Tokenizer& tokenizer, const Json& expected,
                     const std::function<Tokenizer::Encoding()>& encode, const std::string& where) {
  if (expected.contains("error")) {
    EXPECT_THROW(encode(), Error) << where << ": the library fails with: " << expected["error"].get<std::string>();
    return;
  }
  Tokenizer::Encoding encoding;
  try {
    encoding = encode();
  } catch (const Error& e) {
    ADD_FAILURE() << where << ": " << e.what();
    return;
  }
  const auto ids = expected["ids"].get<std::vector<int32_t>>();
  const auto tokens = expected["tokens"].get<std::vector<std::string>>();
  const auto type_ids = expected["type_ids"].get<std::vector<int32_t>>();
  const auto attention_mask = expected["attention_mask"].get<std::vector<int32_t>>();
  EXPECT_EQ(ids, encoding.ids) << where << ": ids: " << first_difference(ids, encoding.ids);
  EXPECT_EQ(tokens, encoding.tokens) << where << ": tokens: " << first_difference(tokens, encoding.tokens);
  EXPECT_EQ(type_ids, encoding.type_ids) << where << ": type_ids: " << first_difference(type_ids, encoding.type_ids);
  EXPECT_EQ(attention_mask, encoding.attention_mask)
      << where << ": attention_mask: " << first_difference(attention_mask, encoding.attention_mask);

  for (const bool skip : {true, false}) {
    const std::string want = expected[skip ? "decode_skip_special" : "decode_keep_special"].get<std::string>();
    const std::string got = tokenizer.decode(ids, skip);
    EXPECT_EQ(want, got) << where << ": decode(skip_special_tokens=" << (skip ? "true" : "false")
                         << "): byte " << first_difference(want, got);
  }
}

TruncationStrategy strategy_named(const std::string& name) {
  if (name == "only_first") return TruncationStrategy::kOnlyFirst;
  if (name == "only_second") return TruncationStrategy::kOnlySecond;
  return TruncationStrategy::kLongestFirst;
}

class TokenizerParityTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    golden_ = read_json_file((kGoldenDir / (GetParam() + ".json")).string(), ErrorKind::kIo);
    tokenizer_.emplace(Tokenizer::from_file((kSourceDir / golden_["tokenizer"].get<std::string>()).string()));
    for (const Json& c : golden_["cases"]) texts_[c["name"].get<std::string>()] = c["text"].get<std::string>();
  }

  const std::string& text(const Json& name) const { return texts_.at(name.get<std::string>()); }

  Json golden_;
  std::optional<Tokenizer> tokenizer_;
  std::map<std::string, std::string> texts_;
};

// Encodings as the library's Tokenizer.from_file(...).encode gives them: the file's own
// truncation and padding apply.
constexpr auto kFromFile = Tokenizer::TruncationAndPadding::kFromFile;

TEST_P(TokenizerParityTest, EncodeAndDecodeMatchTheLibrary) {
  ASSERT_FALSE(golden_["cases"].empty());
  for (const Json& c : golden_["cases"]) {
    const std::string& input = text(c["name"]);
    for (const bool add_special : {true, false}) {
      const std::string where = "case '" + c["name"].get<std::string>() + "' (text \"" + visible(input) +
                                "\", add_special_tokens=" + (add_special ? "true" : "false") + ")";
      expect_encoding(*tokenizer_, c[add_special ? "with_special" : "without_special"],
                      [&] { return tokenizer_->encode(input, add_special, kFromFile); }, where);
    }
  }
}

TEST_P(TokenizerParityTest, PairsMatchTheLibrary) {
  ASSERT_FALSE(golden_["pairs"].empty());
  for (const Json& pair : golden_["pairs"]) {
    const std::string& first = text(pair["first"]);
    const std::string& second = text(pair["second"]);
    for (const bool add_special : {true, false}) {
      const std::string where = "pair '" + pair["first"].get<std::string>() + "', '" +
                                pair["second"].get<std::string>() +
                                "' (add_special_tokens=" + (add_special ? "true" : "false") + ")";
      expect_encoding(*tokenizer_, pair[add_special ? "with_special" : "without_special"],
                      [&] { return tokenizer_->encode_pair(first, second, add_special, kFromFile); }, where);
    }
  }
}

class TokenizerTruncationParityTest : public TokenizerParityTest {};

TEST_P(TokenizerTruncationParityTest, TruncationsMatchTheLibrary) {
  ASSERT_FALSE(golden_["truncations"].empty());
  for (const Json& record : golden_["truncations"]) {
    const Tokenizer::Truncation truncation(
        record["max_length"].get<size_t>(), strategy_named(record["strategy"].get<std::string>()),
        record["direction"].get<std::string>() == "left" ? Tokenizer::Side::kLeft : Tokenizer::Side::kRight);
    const std::string& first = text(record["first"]);
    const bool pair = !record["second"].is_null();
    const std::string where = "'" + record["first"].get<std::string>() +
                              (pair ? "', '" + record["second"].get<std::string>() : std::string()) + "' cut to " +
                              std::to_string(truncation.max_length) + ", " + record["strategy"].get<std::string>() +
                              " from the " + record["direction"].get<std::string>();
    expect_encoding(*tokenizer_, record, [&] {
      return pair ? tokenizer_->encode_truncated(first, text(record["second"]), truncation)
                  : tokenizer_->encode_truncated(first, truncation);
    }, where);
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
INSTANTIATE_TEST_SUITE_P(Goldens, TokenizerTruncationParityTest, testing::ValuesIn(golden_names("truncations")),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(TokenizerGoldens, AllStylesArePresent) {
  const std::vector<std::string> names = golden_names();
  for (const char* style : {"gpt2", "llama3", "sentencepiece", "llama2", "bert", "unigram_precompiled"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), style), names.end()) << "missing golden for " << style;
  }
}

// Plain encode ignores tokenizer.json's truncation and padding: the fixture that has them
// encodes every case as the same model without them does.
TEST(TokenizerApi, PlainEncodeIgnoresTheFilesTruncationAndPadding) {
  const Tokenizer plain = Tokenizer::from_file((kSourceDir / "tests/fixtures/tokenizers/bert/tokenizer.json").string());
  const Tokenizer shaped =
      Tokenizer::from_file((kSourceDir / "tests/fixtures/tokenizers/bert_truncation_padding/tokenizer.json").string());
  const Json cases = read_json_file((kSourceDir / "tests/fixtures/tokenizer_cases.json").string(), ErrorKind::kIo);
  bool shaping_shows = false;
  for (const Json& c : cases["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const Tokenizer::Encoding encoding = shaped.encode(text);
    EXPECT_EQ(plain.encode(text).ids, encoding.ids) << visible(text);
    EXPECT_EQ(std::vector<int32_t>(encoding.ids.size(), 1), encoding.attention_mask) << visible(text);
    shaping_shows = shaping_shows || shaped.encode(text, true, kFromFile).ids != encoding.ids;
  }
  EXPECT_TRUE(shaping_shows);
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
