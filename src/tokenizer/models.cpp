#include "tokenizer/models.h"

#include <limits>

namespace canrun {

Vocab Vocab::parse(const JsonField& field) {
  if (!field.json().is_object())
    field.fail(std::string("expected an object, got ") + field.json().type_name());
  Vocab vocab;
  vocab.ids_.reserve(field.json().size());
  vocab.tokens_.reserve(field.json().size());
  for (auto it = field.json().begin(); it != field.json().end(); ++it) {
    // Fast path for valid ids; as_token_id reports what is wrong with the others.
    const int32_t id = it.value().is_number_integer() && it.value().get<int64_t>() >= 0 &&
                               it.value().get<int64_t>() <= std::numeric_limits<int32_t>::max()
                           ? static_cast<int32_t>(it.value().get<int64_t>())
                           : field.entry(it.key()).as_token_id();
    vocab.ids_.emplace(it.key(), id);
    vocab.tokens_[id] = it.key();
  }
  vocab.size_ = vocab.ids_.size();
  return vocab;
}

Vocab Vocab::from_pieces(std::vector<std::string> pieces) {
  Vocab vocab;
  vocab.size_ = pieces.size();
  vocab.ids_.reserve(pieces.size());
  vocab.tokens_.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    vocab.ids_.insert_or_assign(pieces[id], static_cast<int32_t>(id));
    vocab.tokens_.emplace(static_cast<int32_t>(id), std::move(pieces[id]));
  }
  return vocab;
}

std::optional<int32_t> Vocab::find(std::string_view token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string* Vocab::token(int32_t id) const {
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

std::unique_ptr<Model> parse_model(const JsonField& field) {
  if (field.is_null()) field.fail("is null; a model is required");
  // Files written before "type" existed are recognised by their fields.
  std::string type;
  if (const auto type_field = field.find("type")) {
    type = type_field->as_string();
  } else if (field.find("merges")) {
    type = "BPE";
  } else {
    field["type"];  // reports the missing field
  }
  if (type == "BPE") return parse_bpe_model(field);
  if (type == "WordPiece") return parse_word_piece_model(field);
  if (type == "WordLevel") return parse_word_level_model(field);
  if (type == "Unigram") return parse_unigram_model(field);
  field["type"].fail("'" + type + "' is not supported (supported: BPE, Unigram, WordPiece, WordLevel)");
}

}  // namespace canrun
