// A Hugging Face tokenizer.json pipeline that encodes and decodes exactly as the
// Python `tokenizers` library does: added tokens, normalizer, pre-tokenizer,
// model (BPE, Unigram, WordPiece, WordLevel), post-processor, truncation, padding
// and decoder.
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
    std::vector<int32_t> type_ids;        // each token's segment (sentence A or B), as the post-processor sets it
    std::vector<int32_t> attention_mask;  // 1 for a token, 0 for padding
  };

  // The end of a sequence that truncation cuts or padding fills.
  enum class Side { kLeft, kRight };

  // The library's truncation: at most `max_length` ids in all, special tokens included.
  struct Truncation {
    enum class Strategy {
      kLongestFirst,  // cut the longer sequence first, down to an even share when both are long
      kOnlyFirst,
      kOnlySecond,
    };
    // A bare max_length converts, with the library's defaults.
    Truncation(size_t max_length, Strategy strategy = Strategy::kLongestFirst, Side side = Side::kRight)
        : max_length(max_length), strategy(strategy), side(side) {}

    size_t max_length;
    Strategy strategy;
    Side side;
  };

  // Whether an encode applies tokenizer.json's own "truncation" and "padding" sections, as the
  // library's Tokenizer.from_file(...).encode does (kFromFile). The plain ids that generation
  // and embeddings take ignore them (kNone), as transformers does.
  enum class TruncationAndPadding { kNone, kFromFile };

  // Invalid UTF-8 in the text is read as U+FFFD, as Python's errors="replace" does. Throws
  // Error(kUsage) where the file's truncation cannot cut as it says (see encode_truncated).
  Encoding encode(std::string_view text, bool add_special_tokens = true,
                  TruncationAndPadding length = TruncationAndPadding::kNone) const;
  // Two sequences (a query and a passage, a premise and a hypothesis) joined by the
  // post-processor's pair template, which types them: B is 1 under BERT's, 0 under RoBERTa's.
  Encoding encode_pair(std::string_view first, std::string_view second, bool add_special_tokens = true,
                       TruncationAndPadding length = TruncationAndPadding::kNone) const;
  // encode or encode_pair cut to `truncation`, in place of the file's truncation and without
  // padding. Throws Error(kUsage) when max_length leaves no room beside the special tokens,
  // or when the strategy cannot cut enough (only_second with one sequence, a sequence too short).
  Encoding encode_truncated(std::string_view text, const Truncation& truncation) const;
  Encoding encode_truncated(std::string_view first, std::string_view second, const Truncation& truncation) const;
  // An id outside the vocabulary decodes to nothing, as in the tokenizers library.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = true) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;  // an added token marked "special"
  size_t vocab_size() const;          // model vocabulary plus added tokens, counted once each

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  const std::string* token_string(int32_t id) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace canrun
