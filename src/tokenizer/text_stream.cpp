#include "tokenizer/text_stream.h"

#include <string_view>

namespace canrun {
namespace {

// What decoding writes for bytes that are not (yet) a whole character.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// A UTF-8 character has at most three bytes after its first, so at most three tokens after.
constexpr size_t kSplitTokens = 3;

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
  if (!ends_incomplete(text)) return advance(printed, text, ids_.size());
  // Bytes that are no character at all end the text with U+FFFD too, and would be held (and
  // decoded again) for ever. A split character's missing bytes come within its next three
  // tokens, so once more tokens than that wait, all but the last three are printed, provided
  // their text is the start of the whole window's.
  if (ids_.size() - printed_ <= 2 * kSplitTokens) return "";
  const size_t settled = ids_.size() - kSplitTokens;
  const std::string before = tokenizer_.decode(ids.subspan(context_, settled - context_));
  if (text.compare(0, before.size(), before) != 0) return "";
  return advance(printed, before, settled);
}

std::string TextStream::advance(const std::string& printed, const std::string& text, size_t printed_to) {
  if (text.size() <= printed.size() || text.compare(0, printed.size(), printed) != 0) return "";
  context_ = printed_;
  printed_ = printed_to;
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
