// Tokens added on top of the model vocabulary ("added_tokens"): special tokens
// such as <|im_start|> and user additions. They are cut out of the input before
// normalization (or after it, for tokens marked "normalized") and never reach
// the model.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/models.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

struct AddedToken {
  std::string content;
  bool single_word = false;  // only match when not inside a word
  bool lstrip = false;       // swallow whitespace on the left
  bool rstrip = false;       // swallow whitespace on the right
  bool normalized = true;    // match against normalized text
  bool special = false;      // skipped by decode(skip_special_tokens)

  bool operator==(const AddedToken&) const = default;
};

class AddedVocabulary {
 public:
  // Registers a token the way the library's add_tokens does: it keeps the id
  // the model or an earlier added token gives its content, else takes the
  // next free id after the model vocabulary.
  void add(const AddedToken& token, const Vocab& model_vocab, const Normalizer* normalizer);
  // Prepares matching; call once all tokens are added.
  void build_matchers();

  // Cuts added tokens out of `text` and normalizes the rest.
  PreTokenizedString extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

  std::optional<int32_t> token_to_id(std::string_view content) const;
  const AddedToken* find(int32_t id) const;
  // The string decode and id_to_token use: the normalized content for tokens
  // marked "normalized" (so "[MASK]" under Lowercase reads "[mask]"), else the content.
  const std::string* decode_form(int32_t id) const;
  bool is_special(std::string_view content) const { return special_contents_.contains(content); }
  // Added contents that the model vocabulary does not already hold.
  size_t count_new(const Vocab& model_vocab) const;

 private:
  // Finds added tokens leftmost-first, longest at each position, without overlaps.
  class Matcher {
   public:
    void add(std::string_view pattern, int32_t id);
    struct Match {
      size_t begin;
      size_t end;
      int32_t id;
    };
    std::vector<Match> find_all(std::string_view text) const;

   private:
    struct Node {
      std::map<unsigned char, size_t> children;
      std::optional<int32_t> id;
    };
    std::vector<Node> nodes_{Node{}};
  };

  std::vector<Split> split_on_tokens(const NormalizedString& text, const Matcher& matcher) const;

  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::unordered_map<int32_t, AddedToken> tokens_;
  std::optional<int32_t> max_id_;                              // the largest id in tokens_
  std::unordered_map<int32_t, std::string> normalized_forms_;  // only where normalizing changes content
  std::set<std::string, std::less<>> special_contents_;
  Matcher raw_matcher_;
  Matcher normalized_matcher_;
};

}  // namespace canrun
