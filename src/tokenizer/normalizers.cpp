#include "tokenizer/normalizers.h"

#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/pattern.h"
#include "tokenizer/unicode.h"

namespace canrun {
namespace {

using unicode::NormalForm;

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  void normalize(NormalizedString& text) const override { text.normalize(form_); }

 private:
  NormalForm form_;
};

class Lowercase : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override { text.map_chars(unicode::to_lowercase); }
};

class Strip : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormalizedString& text) const override { text.strip(left_, right_); }

 private:
  bool left_, right_;
};

class StripAccents : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override {
    text.map_chars([](char32_t c) { return unicode::is_combining_mark(c) ? U"" : std::u32string(1, c); });
  }
};

class Replace : public Normalizer {
 public:
  Replace(std::shared_ptr<const Pattern> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(NormalizedString& text) const override { text.replace(*pattern_, content_); }

 private:
  std::shared_ptr<const Pattern> pattern_;
  std::string content_;
};

class Prepend : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(NormalizedString& text) const override { text.prepend(prefix_); }

 private:
  std::string prefix_;
};

class ByteLevelNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override { text.map_chars(byte_level::encode_char); }
};

// BERT's cleanup: drop control characters, unify whitespace, space out CJK
// ideographs, strip accents, lowercase.
class BertNormalizer : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text),
        chinese_chars_(chinese_chars),
        strip_accents_(strip_accents),
        lowercase_(lowercase) {}

  void normalize(NormalizedString& text) const override {
    if (clean_text_) text.map_chars(clean_char);
    if (chinese_chars_) text.map_chars(pad_chinese_char);
    if (strip_accents_) {
      text.normalize(NormalForm::kNfd);
      text.map_chars([](char32_t c) { return unicode::is_nonspacing_mark(c) ? U"" : std::u32string(1, c); });
    }
    if (lowercase_) text.map_chars(unicode::to_lowercase);
  }

 private:
  static std::u32string clean_char(char32_t c) {
    const bool bert_space = c == U'\t' || c == U'\n' || c == U'\r';
    if (c == 0 || c == 0xFFFD || (!bert_space && unicode::is_other(c))) return U"";
    return std::u32string(1, bert_space || unicode::is_whitespace(c) ? U' ' : c);
  }

  static std::u32string pad_chinese_char(char32_t c) {
    const bool chinese = (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
                         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
                         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
                         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
    return chinese ? std::u32string{U' ', c, U' '} : std::u32string(1, c);
  }

  bool clean_text_, chinese_chars_, strip_accents_, lowercase_;
};

class Sequence : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(NormalizedString& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> parse_normalizer(const JsonField& field) {
  const JsonField type_field = field["type"];
  const std::string type = type_field.as_string();
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNfkd);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  if (type == "Strip") {
    return std::make_unique<Strip>(field["strip_left"].as_bool(), field["strip_right"].as_bool());
  }
  if (type == "Replace") {
    return std::make_unique<Replace>(parse_pattern(field["pattern"]), field["content"].as_string());
  }
  if (type == "Prepend") return std::make_unique<Prepend>(field["prepend"].as_string());
  if (type == "Precompiled") return parse_precompiled_normalizer(field);
  if (type == "BertNormalizer") {
    const bool lowercase = field["lowercase"].as_bool();
    const auto strip_accents = field.find("strip_accents");
    return std::make_unique<BertNormalizer>(field["clean_text"].as_bool(),
                                            field["handle_chinese_chars"].as_bool(),
                                            strip_accents ? strip_accents->as_bool() : lowercase, lowercase);
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const JsonField& step : field["normalizers"].items()) steps.push_back(parse_normalizer(step));
    return std::make_unique<Sequence>(std::move(steps));
  }
  type_field.fail("'" + type + "' is not supported");
}

}  // namespace canrun
