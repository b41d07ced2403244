#include "tokenizer/decoders.h"

#include <optional>

#include "tokenizer/byte_level.h"
#include "tokenizer/pattern.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/unicode.h"

namespace canrun {
namespace {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// WordPiece's detokenization cleanup: no space before punctuation and contractions.
std::string cleanup(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) text = replace_all(std::move(text), from, to);
  return text;
}

class ByteLevel : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      std::string token_bytes;
      bool all_mapped = true;
      for (size_t pos = 0; pos < token.size() && all_mapped;) {
        const auto byte = byte_level::char_to_byte(unicode::next_char(token, pos));
        all_mapped = byte.has_value();
        if (byte) token_bytes.push_back(static_cast<char>(*byte));
      }
      bytes += all_mapped ? token_bytes : token;
    }
    return {unicode::to_valid_utf8(bytes)};
  }
};

class Metaspace : public Decoder {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme) : replacement_(replacement), scheme_(scheme) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string decoded;
      for (size_t pos = 0; pos < tokens[i].size();) {
        const char32_t c = unicode::next_char(tokens[i], pos);
        if (c != replacement_) {
          unicode::append_utf8(decoded, c);
        } else if (i != 0 || scheme_ == PrependScheme::kNever) {
          decoded += ' ';
        }
      }
      tokens[i] = std::move(decoded);
    }
    return tokens;
  }

 private:
  char32_t replacement_;
  PrependScheme scheme_;
};

// Runs of <0xAB> tokens become the text their bytes spell, or one U+FFFD per
// byte when those bytes are not valid UTF-8.
class ByteFallback : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    size_t pending_count = 0;
    const auto flush = [&] {
      if (pending_count == 0) return;
      if (unicode::to_valid_utf8(pending) == pending) {
        out.push_back(pending);
      } else {
        out.insert(out.end(), pending_count, "\xEF\xBF\xBD");
      }
      pending.clear();
      pending_count = 0;
    };
    for (std::string& token : tokens) {
      if (const auto byte = byte_of(token)) {
        pending.push_back(static_cast<char>(*byte));
        ++pending_count;
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    return out;
  }

 private:
  static std::optional<int> hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return std::nullopt;
  }

  // "<0xAB>"; Rust's u8::from_str_radix also takes "<0x+B>".
  static std::optional<int> byte_of(const std::string& token) {
    if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return std::nullopt;
    const auto low = hex_digit(token[4]);
    if (!low) return std::nullopt;
    if (token[3] == '+') return *low;
    const auto high = hex_digit(token[3]);
    if (!high) return std::nullopt;
    return *high * 16 + *low;
  }
};

class Fuse : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string joined;
    for (const std::string& token : tokens) joined += token;
    return {joined};
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character.
class Strip : public Decoder {
 public:
  Strip(char32_t content, size_t start, size_t stop) : content_(content), start_(start), stop_(stop) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (std::string& token : tokens) {
      const std::u32string chars = unicode::to_utf32(token);
      size_t begin = 0, end = chars.size();
      while (begin < std::min(start_, chars.size()) && chars[begin] == content_) ++begin;
      while (chars.size() - end < stop_ && end > begin && chars[end - 1] == content_) --end;
      std::string stripped;
      for (size_t i = begin; i < end; ++i) unicode::append_utf8(stripped, chars[i]);
      token = std::move(stripped);
    }
    return tokens;
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

class Replace : public Decoder {
 public:
  Replace(std::shared_ptr<const Pattern> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (std::string& token : tokens) {
      std::string replaced;
      for (const PatternMatch& m : pattern_->find_matches(token)) {
        replaced += m.is_match ? content_ : token.substr(m.begin, m.end - m.begin);
      }
      token = std::move(replaced);
    }
    return tokens;
  }

 private:
  std::shared_ptr<const Pattern> pattern_;
  std::string content_;
};

class WordPiece : public Decoder {
 public:
  WordPiece(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i != 0) {
        if (tokens[i].starts_with(prefix_)) {
          tokens[i].erase(0, prefix_.size());
        } else {
          tokens[i] = " " + tokens[i];
        }
      }
      if (cleanup_) tokens[i] = cleanup(std::move(tokens[i]));
    }
    return tokens;
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class BpeDecoder : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = replace_all(std::move(tokens[i]), suffix_, i + 1 == tokens.size() ? "" : " ");
    }
    return tokens;
  }

 private:
  std::string suffix_;
};

class Ctc : public Decoder {
 public:
  Ctc(std::string pad_token, std::string word_delimiter, bool cleanup)
      : pad_token_(std::move(pad_token)), word_delimiter_(std::move(word_delimiter)), cleanup_(cleanup) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0 && tokens[i] == tokens[i - 1]) continue;
      std::string text = replace_all(tokens[i], pad_token_, "");
      if (cleanup_) text = replace_all(cleanup(std::move(text)), word_delimiter_, " ");
      if (!text.empty()) out.push_back(std::move(text));
    }
    return out;
  }

 private:
  std::string pad_token_, word_delimiter_;
  bool cleanup_;
};

class Sequence : public Decoder {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (const auto& step : steps_) tokens = step->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> parse_decoder(const JsonField& field) {
  const JsonField type_field = field["type"];
  const std::string type = type_field.as_string();
  if (type == "ByteLevel") return std::make_unique<ByteLevel>();
  if (type == "Metaspace") {
    return std::make_unique<Metaspace>(field["replacement"].as_char(), parse_prepend_scheme(field));
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallback>();
  if (type == "Fuse") return std::make_unique<Fuse>();
  if (type == "Strip") {
    return std::make_unique<Strip>(field["content"].as_char(), field["start"].as_count(), field["stop"].as_count());
  }
  if (type == "Replace") {
    return std::make_unique<Replace>(parse_pattern(field["pattern"]), field["content"].as_string());
  }
  if (type == "WordPiece") {
    return std::make_unique<WordPiece>(field.string_or("prefix", "##"), field.bool_or("cleanup", true));
  }
  if (type == "BPEDecoder") return std::make_unique<BpeDecoder>(field.string_or("suffix", "</w>"));
  if (type == "CTC") {
    return std::make_unique<Ctc>(field.string_or("pad_token", "<pad>"),
                                 field.string_or("word_delimiter_token", "|"),
                                 field.bool_or("cleanup", true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const JsonField& step : field["decoders"].items()) steps.push_back(parse_decoder(step));
    return std::make_unique<Sequence>(std::move(steps));
  }
  type_field.fail("'" + type + "' is not supported");
}

}  // namespace canrun
