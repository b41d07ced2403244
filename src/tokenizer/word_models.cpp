// WordPiece (greedy longest-prefix, BERT) and WordLevel (whole-word lookup).
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

Token unknown_token(const Vocab& vocab, const std::string& unk_token) {
  const auto id = vocab.find(unk_token);
  if (!id) fail(ErrorKind::kTokenizer, "model.unk_token '" + unk_token + "' is not in model.vocab");
  return {*id, unk_token};
}

class WordPieceModel : public Model {
 public:
  WordPieceModel(Vocab vocab, std::string unk_token, std::string prefix, size_t max_chars)
      : Model(std::move(vocab)),
        unk_token_(std::move(unk_token)),
        prefix_(std::move(prefix)),
        max_chars_(max_chars) {}

  std::vector<Token> tokenize(std::string_view word) const override {
    if (unicode::to_utf32(word).size() > max_chars_) return {unknown_token(vocab_, unk_token_)};
    std::vector<Token> tokens;
    for (size_t begin = 0; begin < word.size();) {
      std::optional<Token> longest;
      size_t end = word.size();
      for (; end > begin; end = previous_char_boundary(word, end)) {
        std::string piece(word.substr(begin, end - begin));
        if (begin > 0) piece = prefix_ + piece;
        if (const auto id = vocab_.find(piece)) {
          longest = Token{*id, std::move(piece)};
          break;
        }
      }
      if (!longest) return {unknown_token(vocab_, unk_token_)};
      tokens.push_back(std::move(*longest));
      begin = end;
    }
    return tokens;
  }

 private:
  static size_t previous_char_boundary(std::string_view text, size_t pos) {
    do {
      --pos;
    } while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80);
    return pos;
  }

  std::string unk_token_;
  std::string prefix_;
  size_t max_chars_;
};

class WordLevelModel : public Model {
 public:
  WordLevelModel(Vocab vocab, std::string unk_token)
      : Model(std::move(vocab)), unk_token_(std::move(unk_token)) {}

  std::vector<Token> tokenize(std::string_view word) const override {
    if (const auto id = vocab_.find(word)) return {{*id, std::string(word)}};
    return {unknown_token(vocab_, unk_token_)};
  }

 private:
  std::string unk_token_;
};

}  // namespace

std::unique_ptr<Model> parse_word_piece_model(const JsonField& field) {
  const auto max_chars = field.find("max_input_chars_per_word");
  return std::make_unique<WordPieceModel>(Vocab::parse(field["vocab"]), field.string_or("unk_token", "[UNK]"),
                                          field.string_or("continuing_subword_prefix", "##"),
                                          max_chars ? max_chars->as_count() : 100);
}

std::unique_ptr<Model> parse_word_level_model(const JsonField& field) {
  return std::make_unique<WordLevelModel>(Vocab::parse(field["vocab"]),
                                          field.string_or("unk_token", "<unk>"));
}

}  // namespace canrun
