// Malformed or unsupported tokenizer.json files: each error has the right kind
// and names the file and the field at fault.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

// A minimal valid tokenizer: "ab" merges, one special token.
Json base_json() {
  return Json::parse(R"({
    "version": "1.0",
    "added_tokens": [{"id": 3, "content": "<s>", "special": true, "normalized": false}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3}, "merges": ["a b"]}
  })");
}

// Expects from_json to throw an Error of `kind` whose message names the origin
// and holds every fragment.
void expect_error(const Json& json, ErrorKind kind, const std::vector<std::string>& fragments) {
  try {
    Tokenizer::from_json(json, "bad/tokenizer.json");
    ADD_FAILURE() << "no error for " << json.dump();
  } catch (const Error& e) {
    EXPECT_EQ(error_kind_name(kind), error_kind_name(e.kind())) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(0u, message.rfind("bad/tokenizer.json: ", 0)) << message;
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string::npos, message.find(fragment)) << "'" << fragment << "' not in: " << message;
    }
  }
}

TEST(TokenizerErrors, BaseIsValid) {
  const Tokenizer tokenizer = Tokenizer::from_json(base_json(), "base");
  EXPECT_EQ(std::vector<int32_t>({3, 2, 0}), tokenizer.encode("<s>aba").ids);
}

TEST(TokenizerErrors, NotJsonNamesTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "canrun_not_json_tokenizer.json";
  std::ofstream(path) << "{\"model\": [1, 2";
  try {
    Tokenizer::from_file(path.string());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(ErrorKind::kTokenizer, e.kind());
    EXPECT_NE(std::string::npos, std::string(e.what()).find(path.string())) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("invalid JSON")) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(TokenizerErrors, MissingFileIsAnIoError) {
  try {
    Tokenizer::from_file("/nonexistent/tokenizer.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(ErrorKind::kIo, e.kind());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("/nonexistent/tokenizer.json")) << e.what();
  }
}

TEST(TokenizerErrors, TopLevelMustBeAnObject) {
  expect_error(Json::array(), ErrorKind::kTokenizer, {"expected an object, got array"});
}

TEST(TokenizerErrors, MissingModel) {
  Json json = base_json();
  json.erase("model");
  expect_error(json, ErrorKind::kTokenizer, {"model: is missing"});
}

TEST(TokenizerErrors, UnknownModelType) {
  Json json = base_json();
  json["model"]["type"] = "Mystery";
  expect_error(json, ErrorKind::kTokenizer, {"model.type: 'Mystery' is not supported"});
}

TEST(TokenizerErrors, MergeWithUnknownToken) {
  Json json = base_json();
  json["model"]["merges"] = Json::array({"a b", "a zz"});
  expect_error(json, ErrorKind::kTokenizer, {"model.merges[1]", "'zz' is not in model.vocab"});
}

TEST(TokenizerErrors, MergeWhoseResultIsNotInTheVocabulary) {
  Json json = base_json();
  json["model"]["merges"] = Json::array({Json::array({"b", "a"})});
  expect_error(json, ErrorKind::kTokenizer, {"model.merges[0]", "merged token 'ba'"});
}

TEST(TokenizerErrors, MergeThatIsNotAPair) {
  Json json = base_json();
  json["model"]["merges"] = Json::array({"a b c"});
  expect_error(json, ErrorKind::kTokenizer, {"model.merges[0]", "two tokens separated by one space"});
  json["model"]["merges"] = Json::array({Json::array({"a"})});
  expect_error(json, ErrorKind::kTokenizer, {"model.merges[0]"});
}

TEST(TokenizerErrors, VocabIdOfTheWrongType) {
  Json json = base_json();
  json["model"]["vocab"]["b"] = "1";
  expect_error(json, ErrorKind::kTokenizer, {"model.vocab['b']", "expected an integer, got string"});
  json["model"]["vocab"]["b"] = -4;
  expect_error(json, ErrorKind::kTokenizer, {"model.vocab['b']", "out of range"});
}

TEST(TokenizerErrors, FieldsOfTheWrongType) {
  Json json = base_json();
  json["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", "yes"}};
  expect_error(json, ErrorKind::kTokenizer,
               {"pre_tokenizer.add_prefix_space", "expected a boolean, got string"});

  json = base_json();
  json["model"]["merges"] = "a b";
  expect_error(json, ErrorKind::kTokenizer, {"model.merges", "expected an array, got string"});

  json = base_json();
  json["added_tokens"][0]["content"] = 7;
  expect_error(json, ErrorKind::kTokenizer, {"added_tokens[0].content", "expected a string, got number"});

  json = base_json();
  json["decoder"] = {{"type", "Strip"}, {"content", "ab"}, {"start", 1}, {"stop", 0}};
  expect_error(json, ErrorKind::kTokenizer, {"decoder.content", "expected a single character"});
}

TEST(TokenizerErrors, UnsupportedComponentTypes) {
  Json json = base_json();
  json["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", Json::array({{{"type", "Digits"}, {"individual_digits", true}}, {{"type", "Foo"}}})}};
  expect_error(json, ErrorKind::kTokenizer, {"pre_tokenizer.pretokenizers[1].type: 'Foo' is not supported"});

  json = base_json();
  json["normalizer"] = {{"type", "Mystery"}};
  expect_error(json, ErrorKind::kTokenizer, {"normalizer.type: 'Mystery' is not supported"});

  json = base_json();
  json["decoder"] = {{"type", "Sequence"}, {"decoders", Json::array({{{"type", "Nope"}}})}};
  expect_error(json, ErrorKind::kTokenizer, {"decoder.decoders[0].type: 'Nope' is not supported"});

  json = base_json();
  json["post_processor"] = {{"type", "Nope"}};
  expect_error(json, ErrorKind::kTokenizer, {"post_processor.type: 'Nope' is not supported"});
}

TEST(TokenizerErrors, DropoutIsRejected) {
  Json json = base_json();
  json["model"]["dropout"] = 0.1;
  expect_error(json, ErrorKind::kTokenizer, {"model.dropout", "only null or 0"});
}

TEST(TokenizerErrors, InvalidRegex) {
  Json json = base_json();
  json["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}, {"invert", false}};
  expect_error(json, ErrorKind::kTokenizer, {"pre_tokenizer.pattern.Regex", "invalid regex"});
}

TEST(TokenizerErrors, UnknownSplitBehavior) {
  Json json = base_json();
  json["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Sideways"}, {"invert", false}};
  expect_error(json, ErrorKind::kTokenizer, {"pre_tokenizer.behavior", "'Sideways'"});
}

TEST(TokenizerErrors, TemplateWithUnknownSpecialToken) {
  Json json = base_json();
  json["post_processor"] = Json::parse(R"({
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}
  })");
  expect_error(json, ErrorKind::kTokenizer, {"post_processor.single[0].SpecialToken.id", "'<bos>'"});
}

// A Unigram model: pieces "a", "b", "ab" (the best of the three), <unk> first.
Json unigram_json() {
  return Json::parse(R"({
    "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": false,
              "vocab": [["<unk>", 0.0], ["a", -2.0], ["b", -2.5], ["ab", -1.0]]}
  })");
}

// Expects `encode` to throw an Error of `kind` that holds every fragment.
void expect_encode_error(const std::function<void()>& encode, ErrorKind kind,
                         const std::vector<std::string>& fragments) {
  try {
    encode();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(error_kind_name(kind), error_kind_name(e.kind())) << e.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string::npos, std::string(e.what()).find(fragment)) << "'" << fragment << "' not in: " << e.what();
    }
  }
}

TEST(TokenizerErrors, UnigramIsValid) {
  const Tokenizer tokenizer = Tokenizer::from_json(unigram_json(), "u.json");
  const Tokenizer::Encoding encoding = tokenizer.encode("abazzb");
  EXPECT_EQ(std::vector<int32_t>({3, 1, 0, 2}), encoding.ids);
  // Unknown characters fuse into one token that keeps their text.
  EXPECT_EQ(std::vector<std::string>({"ab", "a", "zz", "b"}), encoding.tokens);
}

TEST(TokenizerErrors, MalformedUnigramVocabulary) {
  Json json = unigram_json();
  json["model"]["vocab"][1] = Json::array({"a"});
  expect_error(json, ErrorKind::kTokenizer, {"model.vocab[1]", "expected [piece, score]"});
  json = unigram_json();
  json["model"]["vocab"][2][1] = "high";
  expect_error(json, ErrorKind::kTokenizer, {"model.vocab[2][1]", "expected a number, got string"});
  json = unigram_json();
  json["model"]["vocab"][3][0] = 7;
  expect_error(json, ErrorKind::kTokenizer, {"model.vocab[3][0]", "expected a string, got number"});
}

TEST(TokenizerErrors, UnigramUnknownIdOutsideTheVocabulary) {
  Json json = unigram_json();
  json["model"]["unk_id"] = 4;
  expect_error(json, ErrorKind::kTokenizer, {"model.unk_id", "4 is past the end of model.vocab (4 pieces)"});
  json["model"]["unk_id"] = -1;
  expect_error(json, ErrorKind::kTokenizer, {"model.unk_id", "out of range"});
  json["model"]["unk_id"] = 0;
  json["model"]["vocab"] = Json::array();
  expect_error(json, ErrorKind::kTokenizer, {"model.unk_id", "model.vocab is empty"});
}

TEST(TokenizerErrors, UnigramWithoutUnknownIdFailsOnAnUncoveredCharacter) {
  Json json = unigram_json();
  json["model"]["unk_id"] = nullptr;
  const Tokenizer tokenizer = Tokenizer::from_json(json, "u.json");
  EXPECT_EQ(std::vector<int32_t>({3}), tokenizer.encode("ab").ids);
  expect_encode_error([&] { tokenizer.encode("abz"); }, ErrorKind::kTokenizer, {"u.json: model.unk_id: is null"});
}

TEST(TokenizerErrors, MalformedPrecompiledCharsmap) {
  const auto with_charsmap = [](const std::string& charsmap) {
    Json json = base_json();
    json["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", charsmap}};
    return json;
  };
  const std::string field = "normalizer.precompiled_charsmap";
  expect_error(with_charsmap("!!!!"), ErrorKind::kTokenizer, {field, "not base64"});
  expect_error(with_charsmap("AQB="), ErrorKind::kTokenizer, {field, "not base64"});  // stray bits
  expect_error(with_charsmap("AQA"), ErrorKind::kTokenizer, {field, "not base64"});   // no padding
  expect_error(with_charsmap(""), ErrorKind::kTokenizer, {field, "0 bytes, too few"});
  expect_error(with_charsmap("AQA="), ErrorKind::kTokenizer, {field, "2 bytes, too few"});
  expect_error(with_charsmap("kAEAAAAAAAA="), ErrorKind::kTokenizer, {field, "a trie of 100 units"});
  expect_error(with_charsmap("BAAAAAAAAAD/"), ErrorKind::kTokenizer, {field, "not UTF-8"});
  Json missing = base_json();
  missing["normalizer"] = {{"type", "Precompiled"}};
  expect_error(missing, ErrorKind::kTokenizer, {field, "is missing"});
}

// The library only meets a trie that leads outside itself when a text goes there (and panics).
TEST(TokenizerErrors, PrecompiledTrieLeadingOutsideItselfFailsOnUse) {
  for (const char* charsmap : {"AQAAAA==", "BAAAAACgDwA="}) {
    Json json = base_json();
    json["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", charsmap}};
    const Tokenizer tokenizer = Tokenizer::from_json(json, "p.json");
    EXPECT_TRUE(tokenizer.encode("").ids.empty());
    expect_encode_error([&] { tokenizer.encode("ab"); }, ErrorKind::kTokenizer,
                        {"p.json: normalizer.precompiled_charsmap: the trie leads to unit"});
  }
}

TEST(TokenizerErrors, MalformedTruncationAndPadding) {
  const Json truncation = {{"max_length", 4}, {"strategy", "LongestFirst"}, {"stride", 0}, {"direction", "Right"}};
  const Json padding = {{"strategy", {{"Fixed", 8}}}, {"direction", "Left"}, {"pad_to_multiple_of", nullptr},
                        {"pad_id", 0},          {"pad_type_id", 0},      {"pad_token", "a"}};
  Json json = base_json();
  json["truncation"] = truncation;
  json["padding"] = padding;
  // <s> ab ab ab a, cut to 4 from the right, padded to 8 on the left.
  const Tokenizer tokenizer = Tokenizer::from_json(json, "base");
  EXPECT_EQ(std::vector<int32_t>({0, 0, 0, 0, 3, 2, 2, 2}),
            tokenizer.encode("<s>ababab a", true, Tokenizer::TruncationAndPadding::kFromFile).ids);

  const auto expect_bad = [&](const char* section, const char* key, const Json& value,
                              const std::vector<std::string>& fragments) {
    Json bad = json;
    if (value.is_null()) {
      bad[section].erase(key);
    } else {
      bad[section][key] = value;
    }
    expect_error(bad, ErrorKind::kTokenizer, fragments);
  };
  expect_bad("truncation", "strategy", "Sideways", {"truncation.strategy", "'Sideways' is not a strategy"});
  expect_bad("truncation", "max_length", -1, {"truncation.max_length", "must not be negative"});
  expect_bad("truncation", "stride", nullptr, {"truncation.stride", "is missing"});
  expect_bad("truncation", "direction", "Up", {"truncation.direction", "'Up' is not a direction"});
  expect_bad("padding", "strategy", "Longest", {"padding.strategy", "'Longest' is not a strategy"});
  expect_bad("padding", "strategy", {{"Fixed", 1 << 30}}, {"padding.strategy.Fixed", "past the longest padding"});
  expect_bad("padding", "strategy", 8, {"padding.strategy", "expected an object, got number"});
  expect_bad("padding", "pad_to_multiple_of", 1 << 30, {"padding.pad_to_multiple_of", "past the longest padding"});
  expect_bad("padding", "pad_id", -3, {"padding.pad_id", "out of range"});
  expect_bad("padding", "pad_type_id", "0", {"padding.pad_type_id", "expected an integer"});
  expect_bad("padding", "pad_token", nullptr, {"padding.pad_token", "is missing"});
}

TEST(TokenizerErrors, TruncationTheStrategyCannotDoIsAUsageError) {
  Json json = base_json();
  json["truncation"] = {{"max_length", 2}, {"strategy", "OnlySecond"}, {"stride", 0}};
  const Tokenizer tokenizer = Tokenizer::from_json(json, "t.json");
  const auto from_file = Tokenizer::TruncationAndPadding::kFromFile;
  EXPECT_EQ(std::vector<int32_t>({2}), tokenizer.encode("ab", true, from_file).ids);
  expect_encode_error([&] { tokenizer.encode("ababab", true, from_file); }, ErrorKind::kUsage,
                      {"t.json: truncation: only_second truncation needs a second sequence"});
  expect_encode_error([&] { tokenizer.encode_pair("ababab", "a", true, from_file); }, ErrorKind::kUsage,
                      {"t.json: truncation: the second sequence has 1 tokens, too few"});
  EXPECT_EQ(std::vector<int32_t>({2, 2, 2, 0}), tokenizer.encode_pair("ababab", "a").ids);
}

TEST(TokenizerErrors, ExplicitTruncationNeedsRoomBesideTheSpecialTokens) {
  Json json = base_json();
  json["post_processor"] = {{"type", "BertProcessing"}, {"cls", {"<s>", 3}}, {"sep", {"<s>", 3}}};
  const Tokenizer tokenizer = Tokenizer::from_json(json, "t.json");
  EXPECT_EQ(std::vector<int32_t>({3, 2, 3, 0, 3}), tokenizer.encode_truncated("abab", "a", 5).ids);
  expect_encode_error([&] { tokenizer.encode_truncated("abab", "a", 3); }, ErrorKind::kUsage,
                      {"a maximum length of 3 leaves no room for text beside 3 special tokens"});
  expect_encode_error([&] { tokenizer.encode_truncated("abab", 2); }, ErrorKind::kUsage,
                      {"a maximum length of 2 leaves no room"});
}

TEST(TokenizerErrors, TemplateWithAnUnknownSequence) {
  Json json = base_json();
  json["post_processor"] = Json::parse(R"({
    "type": "TemplateProcessing",
    "single": [{"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "C", "type_id": 1}}],
    "special_tokens": {}
  })");
  expect_error(json, ErrorKind::kTokenizer, {"post_processor.pair[1].Sequence.id", "'C' is not a sequence"});
  json["post_processor"]["pair"][1] = Json::parse(R"({"Sequence": {"id": "B", "type_id": -1}})");
  expect_error(json, ErrorKind::kTokenizer, {"post_processor.pair[1].Sequence.type_id", "out of range"});
  json["post_processor"]["single"][0] = Json::parse(R"({"Sequence": {"id": "B", "type_id": 0}})");
  expect_error(json, ErrorKind::kTokenizer, {"post_processor.single[0].Sequence.id", "only hold sequence A"});
}

// Two templates in a row: the second one meets the three pieces the first made, where the
// library stops with todo!().
TEST(TokenizerErrors, TemplateAfterTemplateFailsOnUse) {
  Json json = base_json();
  const Json wrap = Json::parse(R"({
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "<s>", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}
  })");
  json["post_processor"] = {{"type", "Sequence"}, {"processors", Json::array({wrap, wrap})}};
  const Tokenizer tokenizer = Tokenizer::from_json(json, "t.json");
  expect_encode_error([&] { tokenizer.encode("ab"); }, ErrorKind::kTokenizer,
                      {"t.json: post_processor.processors[1]: TemplateProcessing takes one or two sequences"});
}

TEST(TokenizerErrors, UnknownVersion) {
  Json json = base_json();
  json["version"] = "2.0";
  expect_error(json, ErrorKind::kTokenizer, {"version: '2.0'"});
}

TEST(TokenizerErrors, UnkTokenMissingFromTheVocabularyFailsWhenNeeded) {
  Json json = base_json();
  json["model"]["unk_token"] = "<unk>";
  const Tokenizer tokenizer = Tokenizer::from_json(json, "t.json");
  EXPECT_EQ(std::vector<int32_t>({2}), tokenizer.encode("ab").ids);
  try {
    tokenizer.encode("abz");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(ErrorKind::kTokenizer, e.kind());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("model.unk_token '<unk>'")) << e.what();
  }
}

// A model's embedding may have more rows than its tokenizer has tokens (Qwen pads to 151936): an
// id past the vocabulary decodes to nothing, as tokenizers 0.23.3's Tokenizer.decode does
// (decode([504, 99999, 1010]) of SmolLM2's tokenizer is 'Theient'). `canrun tokenize --decode`
// refuses such an id itself.
TEST(TokenizerErrors, AnIdOutsideTheVocabularyDecodesToNothing) {
  const Tokenizer tokenizer = Tokenizer::from_json(base_json(), "t.json");
  EXPECT_EQ(tokenizer.decode(std::vector<int32_t>{0, 99, 1, -1}), tokenizer.decode(std::vector<int32_t>{0, 1}));
  EXPECT_EQ(tokenizer.decode(std::vector<int32_t>{99}), "");
}

TEST(TokenizerErrors, InvalidUtf8IsReadAsReplacementCharacters) {
  Json json = base_json();
  json["model"]["vocab"]["\xEF\xBF\xBD"] = 4;
  const Tokenizer tokenizer = Tokenizer::from_json(json, "t.json");
  // A lone continuation byte, a truncated 3-byte sequence and an overlong form.
  EXPECT_EQ(std::vector<int32_t>({4, 2, 4, 0, 4, 4}), tokenizer
                                                          .encode("\x80"
                                                                  "ab\xE2\x82"
                                                                  "a\xC0\xAF")
                                                          .ids);
}

}  // namespace
}  // namespace canrun
