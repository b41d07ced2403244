#include "tokenizer/text_stream.h"

#include <string_view>

namespace canrun {
namespace {

// What decoding writes for bytes that are not (yet) a whole character.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

std::string TextStream::push(int32_t id) {
  ids_.push_back(id);
  // Decoding the whole sequence, not the new token alone: decoders join pieces (spaces,
  // byte fallback) in ways that depend on their neighbours.
  const std::string text = tokenizer_.decode(ids_);
  const bool incomplete = text.size() >= kReplacement.size() &&
                          std::string_view(text).substr(text.size() - kReplacement.size()) == kReplacement;
  if (incomplete || text.size() <= emitted_) return "";
  std::string added = text.substr(emitted_);
  emitted_ = text.size();
  return added;
}

std::string TextStream::finish() {
  const std::string text = tokenizer_.decode(ids_);
  if (text.size() <= emitted_) return "";
  std::string rest = text.substr(emitted_);
  emitted_ = text.size();
  return rest;
}

}  // namespace canrun
