#include "tokenizer/tokenizer.h"

#include "tokenizer/added_vocabulary.h"
#include "tokenizer/decoders.h"
#include "tokenizer/json_field.h"
#include "tokenizer/models.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/sequence_length.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {

struct Tokenizer::Impl {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  AddedVocabulary added;
  std::optional<TruncationSettings> truncation;  // tokenizer.json's own
  std::optional<PaddingSettings> padding;

  size_t added_tokens(bool pair) const { return post_processor ? post_processor->added_tokens(pair) : 0; }
  std::vector<Token> tokenize(std::string_view text) const;
  // The library's encode: each text through the pipeline, then its post_process: truncation,
  // special tokens and type ids, padding.
  Encoding encode(std::span<const std::string_view> texts, bool add_special_tokens,
                  const TruncationSettings* truncate_to, const PaddingSettings* pad_to) const;
  Encoding encode(std::span<const std::string_view> texts, bool add_special_tokens, TruncationAndPadding length) const {
    const bool from_file = length == TruncationAndPadding::kFromFile;
    return encode(texts, add_special_tokens, from_file && truncation ? &*truncation : nullptr,
                  from_file && padding ? &*padding : nullptr);
  }
  // Settings for encode_truncated; max_length must leave room for the special tokens.
  TruncationSettings truncation_within(const Truncation& limit, bool pair) const;
};

namespace {

AddedToken parse_added_token(const JsonField& field) {
  AddedToken token;
  field["id"].as_token_id();  // the library recomputes ids, but the field must be sound
  token.content = field["content"].as_string();
  token.single_word = field.bool_or("single_word", false);
  token.lstrip = field.bool_or("lstrip", false);
  token.rstrip = field.bool_or("rstrip", false);
  token.normalized = field.bool_or("normalized", true);
  token.special = field.bool_or("special", false);
  return token;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::string& path) {
  return from_json(read_json_file(path, ErrorKind::kTokenizer, kTokenizerJsonLimits), path);
}

Tokenizer Tokenizer::from_json(const Json& json, const std::string& origin) {
  const JsonField root(json, origin, "");
  if (!json.is_object()) root.fail(std::string("expected an object, got ") + json.type_name());
  if (const auto version = root.find("version"); version && version->as_string() != "1.0") {
    version->fail("'" + version->as_string() + "' is not a known tokenizer.json version (expected 1.0)");
  }
  auto impl = std::make_unique<Impl>();
  impl->model = parse_model(root["model"]);
  if (const auto field = root.find("normalizer")) impl->normalizer = parse_normalizer(*field);
  if (const auto field = root.find("pre_tokenizer")) impl->pre_tokenizer = parse_pre_tokenizer(*field);
  if (const auto field = root.find("post_processor")) impl->post_processor = parse_post_processor(*field);
  if (const auto field = root.find("decoder")) impl->decoder = parse_decoder(*field);
  if (const auto field = root.find("truncation")) impl->truncation = parse_truncation(*field);
  if (const auto field = root.find("padding")) impl->padding = parse_padding(*field);
  if (const auto field = root.find("added_tokens")) {
    for (const JsonField& entry : field->items()) {
      impl->added.add(parse_added_token(entry), impl->model->vocab(), impl->normalizer.get());
    }
  }
  impl->added.build_matchers();
  return Tokenizer(std::move(impl));
}

std::vector<Token> Tokenizer::Impl::tokenize(std::string_view text) const {
  PreTokenizedString pieces = added.extract_and_normalize(unicode::to_valid_utf8(text), normalizer.get());
  if (pre_tokenizer) pre_tokenizer->pre_tokenize(pieces);
  pieces.tokenize([&](std::string_view word) { return model->tokenize(word); });
  return pieces.tokens();
}

Tokenizer::Encoding Tokenizer::Impl::encode(std::span<const std::string_view> texts, bool add_special_tokens,
                                            const TruncationSettings* truncate_to,
                                            const PaddingSettings* pad_to) const {
  Encodings sequences;
  for (size_t i = 0; i < texts.size(); ++i) {
    sequences.push_back(tokenize(texts[i]));
    for (Token& token : sequences.back()) token.type_id = static_cast<int32_t>(i);
  }
  const bool pair = sequences.size() == 2;
  if (truncate_to) {
    // The special tokens take their room first. The library subtracts without a check, so a
    // max_length below their count wraps around to no limit at all.
    const size_t specials = add_special_tokens ? added_tokens(pair) : 0;
    if (specials <= truncate_to->limit.max_length) {
      TruncationSettings within = *truncate_to;
      within.limit.max_length -= specials;
      truncate_sequences(sequences[0], pair ? &sequences[1] : nullptr, within);
    }
  }
  if (post_processor) post_processor->process(sequences, add_special_tokens);

  Encoding encoding;
  for (std::vector<Token>& tokens : sequences) {
    for (Token& token : tokens) {
      encoding.ids.push_back(token.id);
      encoding.tokens.push_back(std::move(token.value));
      encoding.type_ids.push_back(token.type_id);
    }
  }
  encoding.attention_mask.assign(encoding.ids.size(), 1);
  if (pad_to) pad_encoding(encoding, *pad_to);
  return encoding;
}

TruncationSettings Tokenizer::Impl::truncation_within(const Truncation& limit, bool pair) const {
  const size_t specials = added_tokens(pair);
  if (specials >= limit.max_length) {
    fail(ErrorKind::kUsage, "a maximum length of " + std::to_string(limit.max_length) +
                                " leaves no room for text beside " + std::to_string(specials) + " special tokens");
  }
  return {limit, 0, "encode_truncated"};
}

Tokenizer::Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens,
                                      TruncationAndPadding length) const {
  const std::string_view texts[] = {text};
  return impl_->encode(texts, add_special_tokens, length);
}

Tokenizer::Encoding Tokenizer::encode_pair(std::string_view first, std::string_view second, bool add_special_tokens,
                                           TruncationAndPadding length) const {
  const std::string_view texts[] = {first, second};
  return impl_->encode(texts, add_special_tokens, length);
}

Tokenizer::Encoding Tokenizer::encode_truncated(std::string_view text, const Truncation& truncation) const {
  const TruncationSettings settings = impl_->truncation_within(truncation, false);
  const std::string_view texts[] = {text};
  return impl_->encode(texts, true, &settings, nullptr);
}

Tokenizer::Encoding Tokenizer::encode_truncated(std::string_view first, std::string_view second,
                                                const Truncation& truncation) const {
  const TruncationSettings settings = impl_->truncation_within(truncation, true);
  const std::string_view texts[] = {first, second};
  return impl_->encode(texts, true, &settings, nullptr);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    const std::string* token = token_string(id);
    // An id past the tokenizer's vocabulary (a model's padded embedding rows) decodes to nothing,
    // as in the tokenizers library.
    if (token == nullptr) continue;
    if (skip_special_tokens && impl_->added.is_special(*token)) continue;
    tokens.push_back(*token);
  }
  if (impl_->decoder) tokens = impl_->decoder->decode_chain(std::move(tokens));
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0 && !impl_->decoder) text += ' ';
    text += tokens[i];
  }
  return text;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto id = impl_->added.token_to_id(token)) return id;
  return impl_->model->vocab().find(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  const std::string* token = token_string(id);
  if (token == nullptr) return std::nullopt;
  return *token;
}

bool Tokenizer::is_special(int32_t id) const {
  const AddedToken* token = impl_->added.find(id);
  return token != nullptr && token->special;
}

size_t Tokenizer::vocab_size() const {
  return impl_->model->vocab().size() + impl_->added.count_new(impl_->model->vocab());
}

const std::string* Tokenizer::token_string(int32_t id) const {
  if (const std::string* added = impl_->added.decode_form(id)) return added;
  return impl_->model->vocab().token(id);
}

}  // namespace canrun
