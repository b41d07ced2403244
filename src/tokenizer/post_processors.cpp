#include "tokenizer/post_processors.h"

#include <map>
#include <optional>
#include <string>

namespace canrun {
namespace {

// Only offsets change under ByteLevel post-processing; ids and tokens do not.
class Passthrough : public PostProcessor {
 public:
  void process(std::vector<Token>&, bool) const override {}
};

// One sequence between special tokens: Bert's [CLS] A [SEP], Roberta's <s> A </s>.
class Surround : public PostProcessor {
 public:
  Surround(Token first, Token last) : first_(std::move(first)), last_(std::move(last)) {}
  void process(std::vector<Token>& tokens, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    tokens.insert(tokens.begin(), first_);
    tokens.push_back(last_);
  }

 private:
  Token first_, last_;
};

class TemplateProcessing : public PostProcessor {
 public:
  // A piece is the input sequence ($A) or the tokens of one special token.
  using Piece = std::optional<std::vector<Token>>;

  explicit TemplateProcessing(std::vector<Piece> single) : single_(std::move(single)) {}

  void process(std::vector<Token>& tokens, bool add_special_tokens) const override {
    std::vector<Token> out;
    for (const Piece& piece : single_) {
      if (!piece) {
        out.insert(out.end(), tokens.begin(), tokens.end());
      } else if (add_special_tokens) {
        out.insert(out.end(), piece->begin(), piece->end());
      }
    }
    tokens = std::move(out);
  }

 private:
  std::vector<Piece> single_;
};

class Sequence : public PostProcessor {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<Token>& tokens, bool add_special_tokens) const override {
    for (const auto& step : steps_) step->process(tokens, add_special_tokens);
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

std::vector<TemplateProcessing::Piece> parse_single_template(
    const JsonField& field, const std::map<std::string, std::vector<Token>>& specials) {
  std::vector<TemplateProcessing::Piece> pieces;
  for (const JsonField& item : field.items()) {
    if (const auto sequence = item.find("Sequence")) {
      const JsonField id = (*sequence)["id"];
      if (id.as_string() != "A") id.fail("a single-sequence template can only hold sequence A");
      pieces.emplace_back(std::nullopt);
    } else if (const auto special = item.find("SpecialToken")) {
      const JsonField id = (*special)["id"];
      const auto it = specials.find(id.as_string());
      if (it == specials.end()) id.fail("'" + id.as_string() + "' is not in special_tokens");
      pieces.emplace_back(it->second);
    } else {
      item.fail("expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
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
    field["pair"].items();  // never applied (single sequences only) but must be well-formed
    return std::make_unique<TemplateProcessing>(parse_single_template(field["single"], specials));
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    return std::make_unique<Surround>(parse_token_pair(field["cls"]), parse_token_pair(field["sep"]));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (const JsonField& step : field["processors"].items()) steps.push_back(parse_post_processor(step));
    return std::make_unique<Sequence>(std::move(steps));
  }
  type_field.fail("'" + type + "' is not supported");
}

}  // namespace canrun
