#include "tokenizer/post_processors.h"

#include <map>
#include <optional>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

Token typed(Token token, int32_t type_id) {
  token.type_id = type_id;
  return token;
}

// Only offsets change under ByteLevel post-processing; ids, tokens and type ids do not.
class Passthrough : public PostProcessor {
 public:
  size_t added_tokens(bool) const override { return 0; }
  void process(Encodings&, bool) const override {}
};

// BertProcessing ([CLS] A [SEP] B [SEP], the closing [SEP] of B typed 1) and RobertaProcessing
// (<s> A </s> </s> B </s>, every token typed 0 with or without special tokens). A later
// sequence is treated as B, as in the library.
class Surround : public PostProcessor {
 public:
  Surround(Token first, Token last, bool roberta)
      : first_(std::move(first)), last_(std::move(last)), roberta_(roberta) {}

  size_t added_tokens(bool pair) const override { return pair ? (roberta_ ? 4 : 3) : 2; }

  void process(Encodings& encodings, bool add_special_tokens) const override {
    if (roberta_) {
      for (std::vector<Token>& tokens : encodings) {
        for (Token& token : tokens) token.type_id = 0;
      }
    }
    if (!add_special_tokens) return;
    for (size_t i = 0; i < encodings.size(); ++i) {
      std::vector<Token>& tokens = encodings[i];
      if (i == 0) {
        tokens.insert(tokens.begin(), typed(first_, 0));
        tokens.push_back(typed(last_, 0));
      } else {
        if (roberta_) tokens.insert(tokens.begin(), typed(last_, 0));
        tokens.push_back(typed(last_, roberta_ ? 0 : 1));
      }
    }
  }

 private:
  Token first_, last_;
  bool roberta_;
};

class TemplateProcessing : public PostProcessor {
 public:
  // The input sequence it stands for ($A is 0, $B is 1), or else the tokens of one special token.
  struct Piece {
    std::optional<size_t> sequence;
    std::vector<Token> special;  // typed already
    int32_t type_id = 0;
  };
  using Template = std::vector<Piece>;

  // `where` names the object in messages: "<file>: post_processor".
  TemplateProcessing(Template single, Template pair, std::string where)
      : single_(std::move(single)), pair_(std::move(pair)), where_(std::move(where)) {}

  size_t added_tokens(bool pair) const override {
    size_t count = 0;
    for (const Piece& piece : pair ? pair_ : single_) count += piece.special.size();
    return count;
  }

  void process(Encodings& encodings, bool add_special_tokens) const override {
    if (encodings.size() != 1 && encodings.size() != 2) {
      fail(ErrorKind::kTokenizer, where_ + ": TemplateProcessing takes one or two sequences, not the " +
                                      std::to_string(encodings.size()) + " pieces an earlier step left");
    }
    Encodings out;
    for (const Piece& piece : encodings.size() == 2 ? pair_ : single_) {
      if (piece.sequence) {
        std::vector<Token> tokens = encodings[*piece.sequence];
        for (Token& token : tokens) token.type_id = piece.type_id;
        out.push_back(std::move(tokens));
      } else if (add_special_tokens) {
        out.push_back(piece.special);
      }
    }
    encodings = std::move(out);
  }

 private:
  Template single_, pair_;
  std::string where_;
};

class Sequence : public PostProcessor {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}

  size_t added_tokens(bool pair) const override {
    size_t count = 0;
    for (const auto& step : steps_) count += step->added_tokens(pair);
    return count;
  }

  void process(Encodings& encodings, bool add_special_tokens) const override {
    for (const auto& step : steps_) step->process(encodings, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

Token parse_token_pair(const JsonField& field) {
  const std::vector<JsonField> parts = field.items();
  if (parts.size() != 2) field.fail("expected [token, id]");
  return {parts[1].as_token_id(), parts[0].as_string()};
}

std::map<std::string, std::vector<Token>> parse_special_tokens(const JsonField& field) {
  std::map<std::string, std::vector<Token>> specials;
  for (const auto& [name, entry] : field.members()) {
    const std::vector<JsonField> ids = entry["ids"].items();
    const std::vector<JsonField> tokens = entry["tokens"].items();
    if (ids.size() != tokens.size()) entry.fail("ids and tokens differ in length");
    std::vector<Token> parsed;
    for (size_t i = 0; i < ids.size(); ++i) parsed.push_back({ids[i].as_token_id(), tokens[i].as_string()});
    specials[name] = std::move(parsed);
  }
  return specials;
}

// A single template may only hold sequence A; a pair template may hold A and B, each any number of times.
TemplateProcessing::Template parse_template(const JsonField& field,
                                            const std::map<std::string, std::vector<Token>>& specials, bool pair) {
  TemplateProcessing::Template pieces;
  for (const JsonField& item : field.items()) {
    TemplateProcessing::Piece piece;
    if (const auto sequence = item.find("Sequence")) {
      const JsonField id = (*sequence)["id"];
      const std::string name = id.as_string();
      if (name == "A") {
        piece.sequence = 0;
      } else if (name == "B" && pair) {
        piece.sequence = 1;
      } else {
        id.fail(pair ? "'" + name + "' is not a sequence (A or B)"
                     : "a single-sequence template can only hold sequence A");
      }
      piece.type_id = (*sequence)["type_id"].as_type_id();
    } else if (const auto special = item.find("SpecialToken")) {
      const JsonField id = (*special)["id"];
      const auto it = specials.find(id.as_string());
      if (it == specials.end()) id.fail("'" + id.as_string() + "' is not in special_tokens");
      piece.type_id = (*special)["type_id"].as_type_id();
      for (const Token& token : it->second) piece.special.push_back(typed(token, piece.type_id));
    } else {
      item.fail("expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

}  // namespace

std::unique_ptr<PostProcessor> parse_post_processor(const JsonField& field) {
  const JsonField type_field = field["type"];
  const std::string type = type_field.as_string();
  if (type == "ByteLevel") return std::make_unique<Passthrough>();
  if (type == "TemplateProcessing") {
    const auto specials = parse_special_tokens(field["special_tokens"]);
    TemplateProcessing::Template single = parse_template(field["single"], specials, false);
    TemplateProcessing::Template pair = parse_template(field["pair"], specials, true);
    return std::make_unique<TemplateProcessing>(std::move(single), std::move(pair),
                                                field.origin() + ": " + field.path());
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    return std::make_unique<Surround>(parse_token_pair(field["cls"]), parse_token_pair(field["sep"]),
                                      type == "RobertaProcessing");
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (const JsonField& step : field["processors"].items()) steps.push_back(parse_post_processor(step));
    return std::make_unique<Sequence>(std::move(steps));
  }
  type_field.fail("'" + type + "' is not supported");
}

}  // namespace canrun
