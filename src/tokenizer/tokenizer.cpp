#include "tokenizer/tokenizer.h"

#include "tokenizer/added_vocabulary.h"
#include "tokenizer/decoders.h"
#include "tokenizer/json_field.h"
#include "tokenizer/models.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/pre_tokenizers.h"
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

// Truncation and padding settings are ignored: they shape batches, and
// transformers turns them off for plain encoding as well.
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
  if (const auto field = root.find("added_tokens")) {
    for (const JsonField& entry : field->items()) {
      impl->added.add(parse_added_token(entry), impl->model->vocab(), impl->normalizer.get());
    }
  }
  impl->added.build_matchers();
  return Tokenizer(std::move(impl));
}

Tokenizer::Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return encode_within(text, add_special_tokens, std::nullopt);
}

Tokenizer::Encoding Tokenizer::encode_truncated(std::string_view text, size_t max_length) const {
  return encode_within(text, true, max_length);
}

Tokenizer::Encoding Tokenizer::encode_within(std::string_view text, bool add_special_tokens,
                                             std::optional<size_t> max_length) const {
  PreTokenizedString pieces =
      impl_->added.extract_and_normalize(unicode::to_valid_utf8(text), impl_->normalizer.get());
  if (impl_->pre_tokenizer) impl_->pre_tokenizer->pre_tokenize(pieces);
  pieces.tokenize([&](std::string_view word) { return impl_->model->tokenize(word); });
  std::vector<Token> tokens = pieces.tokens();
  if (max_length) {
    // The special tokens the post-processor adds to one sequence take their room first.
    std::vector<Token> specials;
    if (impl_->post_processor) impl_->post_processor->process(specials, add_special_tokens);
    if (specials.size() >= *max_length)
      fail(ErrorKind::kUsage, "a maximum length of " + std::to_string(*max_length) + " leaves no room for text beside " +
                                  std::to_string(specials.size()) + " special tokens");
    if (tokens.size() > *max_length - specials.size()) tokens.resize(*max_length - specials.size());
  }
  if (impl_->post_processor) impl_->post_processor->process(tokens, add_special_tokens);

  Encoding encoding;
  encoding.ids.reserve(tokens.size());
  encoding.tokens.reserve(tokens.size());
  for (Token& token : tokens) {
    encoding.ids.push_back(token.id);
    encoding.tokens.push_back(std::move(token.value));
  }
  return encoding;
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
