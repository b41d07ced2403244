// Streamed text: the pieces printed as tokens arrive add up to the whole decode, and a
// character split over tokens (byte-level BPE, byte fallback) is printed whole, never as U+FFFD.
#include <gtest/gtest.h>

#include <filesystem>

#include "tokenizer/text_stream.h"
#include "tokenizer/unicode.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kTokenizers = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/tokenizers";

struct Streamed {
  std::string text;
  int held = 0;  // tokens after which nothing could be printed yet
};

Streamed stream(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  TextStream stream(tokenizer);
  Streamed out;
  for (int32_t id : ids) {
    const std::string piece = stream.push(id);
    EXPECT_EQ(unicode::to_valid_utf8(piece), piece) << "a piece is not whole UTF-8";
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << "a split character was printed as U+FFFD";
    out.held += piece.empty();
    out.text += piece;
  }
  out.text += stream.finish();
  return out;
}

Tokenizer fixture(const char* name) { return Tokenizer::from_file((kTokenizers / name / "tokenizer.json").string()); }

class TextStreamTest : public testing::TestWithParam<const char*> {};

TEST_P(TextStreamTest, PiecesAddUpToTheDecode) {
  const Tokenizer tokenizer = fixture(GetParam());
  for (const std::string text : {"Hello world, this is a test.", "Café ☕ au lait — 日本語のテキスト 🙂!", "  spaced   out \n lines",
                                 "A longer text, so that the window moves: the quick brown fox jumps over the lazy dog, "
                                 "twice — the quick brown fox jumps over the lazy dog. Ça va? 🙂🙂 ☕☕ end."}) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false).ids;
    EXPECT_EQ(stream(tokenizer, ids).text, tokenizer.decode(ids)) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDecoder, TextStreamTest,
                         testing::Values("gpt2", "llama2", "llama3", "sentencepiece", "metaspace_always", "bert",
                                         "bpe_affixes", "word_level"));

class SplitCharacterTest : public testing::TestWithParam<const char*> {};

TEST_P(SplitCharacterTest, IsPrintedWhole) {
  const Tokenizer tokenizer = fixture(GetParam());
  // Multi-byte characters outside these small vocabularies are spelled in bytes, one per token.
  const std::vector<int32_t> emoji = tokenizer.encode("☕🙂", false).ids;
  ASSERT_GT(emoji.size(), 2u);
  const Streamed streamed = stream(tokenizer, emoji);
  EXPECT_GT(streamed.held, 0);
  EXPECT_EQ(streamed.text, tokenizer.decode(emoji));
}

INSTANTIATE_TEST_SUITE_P(ByteLevelAndByteFallback, SplitCharacterTest, testing::Values("gpt2", "llama2", "llama3"));

TEST(TextStream, AnIncompleteCharacterAtTheEndIsGivenByFinish) {
  const Tokenizer tokenizer = fixture("gpt2");
  std::vector<int32_t> ids = tokenizer.encode("☕", false).ids;
  ASSERT_GT(ids.size(), 1u);
  ids.pop_back();  // the character's last byte never arrives
  TextStream stream(tokenizer);
  std::string printed;
  for (int32_t id : ids) printed += stream.push(id);
  EXPECT_EQ(printed, "");
  EXPECT_EQ(stream.finish(), tokenizer.decode(ids));
}

// Found by fuzz/tokenizer_text_fuzz: tokens of bytes that make no character (here 0xF6, a lead
// byte never followed by its continuation) each end the text with U+FFFD, and all of them were
// held and decoded again at every token, so a long run of them took quadratic time. Now at most
// a few are held: the text still adds up to the decode, and comes out as it goes.
TEST(TextStream, BytesThatAreNoCharacterAreNotHeldForEver) {
  for (const auto& [name, byte_token] : {std::pair{"gpt2", "\xC3\xB6"}, std::pair{"llama2", "<0xF6>"}}) {
    const Tokenizer tokenizer = fixture(name);
    const std::optional<int32_t> id = tokenizer.token_to_id(byte_token);
    ASSERT_TRUE(id) << name;
    const std::vector<int32_t> ids(2000, *id);
    TextStream stream(tokenizer);
    std::string printed;
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::string piece = stream.push(ids[i]);
      EXPECT_EQ(unicode::to_valid_utf8(piece), piece);
      printed += piece;
      // Each 0xF6 decodes to one U+FFFD (3 bytes); no more than six tokens wait at any time.
      if (i >= 6) {
        ASSERT_GE(printed.size(), 3 * (i + 1 - 6)) << name << " after token " << i;
      }
    }
    printed += stream.finish();
    EXPECT_EQ(printed, tokenizer.decode(ids)) << name;
  }
}

}  // namespace
}  // namespace canrun
