// A Hugging Face tokenizer.json pipeline that encodes and decodes exactly as the
// Python `tokenizers` library does: added tokens, normalizer, pre-tokenizer,
// model (BPE, WordPiece, WordLevel), post-processor and decoder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"

namespace canrun {

class Tokenizer {
 public:
  // Parses tokenizer.json; throws Error(kTokenizer, "<path>: <field>: <problem>")
  // on anything malformed or unsupported.
  static Tokenizer from_file(const std::string& path);
  static Tokenizer from_json(const Json& json, const std::string& origin);  // origin used in messages

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  struct Encoding {
    std::vector<int32_t> ids;
    std::vector<std::string> tokens;
  };
  // Invalid UTF-8 in `text` is read as U+FFFD, as Python's errors="replace" does.
  Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  // encode with at most `max_length` ids in all, special tokens included: the text's own tokens
  // are cut from the end to leave room for them (the tokenizers library's truncation of one
  // sequence, direction right). Throws Error(kUsage) when `max_length` leaves no room for text.
  Encoding encode_truncated(std::string_view text, size_t max_length) const;
  // An id outside the vocabulary decodes to nothing, as in the tokenizers library.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = true) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;  // an added token marked "special"
  size_t vocab_size() const;          // model vocabulary plus added tokens, counted once each

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  Encoding encode_within(std::string_view text, bool add_special_tokens, std::optional<size_t> max_length) const;
  const std::string* token_string(int32_t id) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace canrun
