#include "tokenizer/text_stream.h"

#include <string_view>

namespace canrun {
namespace {

// What decoding writes for bytes that are not (yet) a whole character.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

bool ends_incomplete(std::string_view text) {
  return text.size() >= kReplacement.size() && text.substr(text.size() - kReplacement.size()) == kReplacement;
}

}  // namespace

std::string TextStream::push(int32_t id) {
  ids_.push_back(id);
  // Decoding a window of tokens with the last printed one as context, not the new token alone:
  // decoders join pieces (spaces, byte fallback) in ways that depend on their neighbours. The
  // window stays a few tokens long, so each token costs the same however long the text grows.
  const std::span<const int32_t> ids(ids_);
  const std::string printed = tokenizer_.decode(ids.subspan(context_, printed_ - context_));
  const std::string text = tokenizer_.decode(ids.subspan(context_));
  if (ends_incomplete(text) || text.size() <= printed.size()) return "";
  context_ = printed_;
  printed_ = ids_.size();
  return text.substr(printed.size());
}

std::string TextStream::finish() {
  const std::span<const int32_t> ids(ids_);
  const std::string printed = tokenizer_.decode(ids.subspan(context_, printed_ - context_));
  const std::string text = tokenizer_.decode(ids.subspan(context_));
  context_ = printed_ = ids_.size();
  return text.size() > printed.size() ? text.substr(printed.size()) : "";
}

}  // namespace canrun
