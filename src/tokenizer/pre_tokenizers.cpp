#include "tokenizer/pre_tokenizers.h"

#include <optional>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/pattern.h"
#include "tokenizer/unicode.h"

namespace canrun {
namespace {

// Splits every piece on `pattern`, treating matches as `behavior` says.
class PatternSplit : public PreTokenizer {
 public:
  PatternSplit(std::shared_ptr<const Pattern> pattern, SplitBehavior behavior)
      : pattern_(std::move(pattern)), behavior_(behavior) {}
  void pre_tokenize(PreTokenizedString& text) const override {
    text.split([&](NormalizedString piece) { return piece.split(*pattern_, behavior_); });
  }

 private:
  std::shared_ptr<const Pattern> pattern_;
  SplitBehavior behavior_;
};

bool is_bert_punctuation(char32_t c) {
  const bool ascii = c < 0x80 && ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') ||
                                  (c >= '[' && c <= '`') || (c >= '{' && c <= '~'));
  return ascii || unicode::is_punctuation(c);
}

class ByteLevel : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        regex_(use_regex ? std::make_shared<RegexPattern>(Regex(byte_level::kGpt2Pattern)) : nullptr) {}

  void pre_tokenize(PreTokenizedString& text) const override {
    text.split([&](NormalizedString piece) {
      if (add_prefix_space_ && piece.get().front() != ' ') piece.prepend(" ");
      if (!regex_) return std::vector<NormalizedString>{std::move(piece)};
      return piece.split(*regex_, SplitBehavior::kIsolated);
    });
    text.normalize([](NormalizedString& piece) { piece.map_chars(byte_level::encode_char); });
  }

 private:
  bool add_prefix_space_;
  std::shared_ptr<const Pattern> regex_;
};

// SentencePiece-style words: spaces become the replacement character ('▁'),
// which then starts each word.
class Metaspace : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(unicode::to_utf8(replacement)),
        scheme_(scheme),
        split_(split),
        space_(std::make_shared<CharPattern>([](char32_t c) { return c == U' '; })),
        delimiter_(std::make_shared<CharPattern>([replacement](char32_t c) { return c == replacement; })) {}

  void pre_tokenize(PreTokenizedString& text) const override {
    text.split([&](NormalizedString piece) {
      piece.replace(*space_, replacement_);
      const bool starts_with_replacement = piece.get().starts_with(replacement_);
      if (!starts_with_replacement && (scheme_ == PrependScheme::kAlways ||
                                       (scheme_ == PrependScheme::kFirst && piece.original_begin() == 0))) {
        piece.prepend(replacement_);
      }
      if (!split_) return std::vector<NormalizedString>{std::move(piece)};
      return piece.split(*delimiter_, SplitBehavior::kMergedWithNext);
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  std::shared_ptr<const Pattern> space_;
  std::shared_ptr<const Pattern> delimiter_;
};

class Sequence : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(PreTokenizedString& text) const override {
    for (const auto& step : steps_) step->pre_tokenize(text);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

SplitBehavior parse_behavior(const JsonField& field) {
  const std::string name = field.as_string();
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  field.fail("'" + name + "' is not a split behavior");
}

// Whitespace splits on \w+|[^\w\s]+ with Rust's regex crate, whose classes are
// is_word_char and is_whitespace: runs of word characters and runs of other
// characters are kept, the whitespace between them is what matches.
class WordRunsPattern : public Pattern {
 public:
  std::vector<PatternMatch> find_matches(std::string_view text) const override {
    if (text.empty()) return {{0, 0, false}};
    enum class Kind { kWord, kSpace, kOther };
    std::vector<PatternMatch> runs;
    std::optional<Kind> previous;
    for (size_t pos = 0; pos < text.size();) {
      const size_t begin = pos;
      const char32_t c = unicode::next_char(text, pos);
      const Kind kind = unicode::is_word_char(c)    ? Kind::kWord
                        : unicode::is_whitespace(c) ? Kind::kSpace
                                                    : Kind::kOther;
      if (kind == previous) {
        runs.back().end = pos;
      } else {
        runs.push_back({begin, pos, kind == Kind::kSpace});
      }
      previous = kind;
    }
    return runs;
  }
};

std::unique_ptr<PreTokenizer> split_on(bool (*predicate)(char32_t), SplitBehavior behavior) {
  return std::make_unique<PatternSplit>(std::make_shared<CharPattern>(predicate), behavior);
}

}  // namespace

// Old files say add_prefix_space instead of prepend_scheme; like the library,
// reject add_prefix_space false unless the scheme is "never".
PrependScheme parse_prepend_scheme(const JsonField& field) {
  PrependScheme scheme = PrependScheme::kAlways;
  if (const auto name_field = field.find("prepend_scheme")) {
    const std::string name = name_field->as_string();
    if (name == "always") {
      scheme = PrependScheme::kAlways;
    } else if (name == "first") {
      scheme = PrependScheme::kFirst;
    } else if (name == "never") {
      scheme = PrependScheme::kNever;
    } else {
      name_field->fail("'" + name + "' is not one of always, first, never");
    }
  }
  const auto legacy = field.find("add_prefix_space");
  if (legacy && !legacy->as_bool() && scheme != PrependScheme::kNever) {
    legacy->fail("false does not match prepend_scheme (always unless given)");
  }
  return scheme;
}

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const JsonField& field) {
  const JsonField type_field = field["type"];
  const std::string type = type_field.as_string();
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevel>(field["add_prefix_space"].as_bool(), field.bool_or("use_regex", true));
  }
  if (type == "Split") {
    std::shared_ptr<const Pattern> pattern = parse_pattern(field["pattern"]);
    if (field["invert"].as_bool()) pattern = std::make_shared<InvertedPattern>(std::move(pattern));
    return std::make_unique<PatternSplit>(std::move(pattern), parse_behavior(field["behavior"]));
  }
  if (type == "Metaspace") {
    return std::make_unique<Metaspace>(field["replacement"].as_char(), parse_prepend_scheme(field),
                                       field.bool_or("split", true));
  }
  if (type == "Digits") {
    return split_on(unicode::is_numeric, field["individual_digits"].as_bool() ? SplitBehavior::kIsolated
                                                                              : SplitBehavior::kContiguous);
  }
  if (type == "Whitespace") {
    return std::make_unique<PatternSplit>(std::make_shared<WordRunsPattern>(), SplitBehavior::kRemoved);
  }
  if (type == "WhitespaceSplit") return split_on(unicode::is_whitespace, SplitBehavior::kRemoved);
  if (type == "Punctuation") {
    const auto behavior = field.find("behavior");
    return split_on(is_bert_punctuation, behavior ? parse_behavior(*behavior) : SplitBehavior::kIsolated);
  }
  if (type == "BertPreTokenizer") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    steps.push_back(split_on(unicode::is_whitespace, SplitBehavior::kRemoved));
    steps.push_back(split_on(is_bert_punctuation, SplitBehavior::kIsolated));
    return std::make_unique<Sequence>(std::move(steps));
  }
  if (type == "CharDelimiterSplit") {
    const char32_t delimiter = field["delimiter"].as_char();
    return std::make_unique<PatternSplit>(
        std::make_shared<CharPattern>([delimiter](char32_t c) { return c == delimiter; }),
        SplitBehavior::kRemoved);
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const JsonField& step : field["pretokenizers"].items()) steps.push_back(parse_pre_tokenizer(step));
    return std::make_unique<Sequence>(std::move(steps));
  }
  type_field.fail("'" + type + "' is not supported");
}

}  // namespace canrun
