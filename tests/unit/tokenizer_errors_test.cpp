// Malformed or unsupported tokenizer.json files: each error has the right kind
// and names the file and the field at fault.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
  json["model"]["type"] = "Unigram";
  expect_error(json, ErrorKind::kTokenizer, {"model.type: 'Unigram' is not supported"});
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
  json["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", ""}};
  expect_error(json, ErrorKind::kTokenizer, {"normalizer.type: 'Precompiled' is not supported"});

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
