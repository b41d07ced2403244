#include "tokenizer/sequence_length.h"

#include <algorithm>
#include <utility>

#include "util/error.h"

namespace canrun {
namespace {

using Side = Tokenizer::Side;
using Strategy = Tokenizer::Truncation::Strategy;

// Padding makes every token a string; a length past this is a malformed file, not a model.
constexpr size_t kMaxPaddedLength = size_t{1} << 20;

Side parse_side(const JsonField& field) {
  const std::string name = field.as_string();
  if (name == "Left") return Side::kLeft;
  if (name == "Right") return Side::kRight;
  field.fail("'" + name + "' is not a direction (Left or Right)");
}

size_t parse_padded_length(const JsonField& field) {
  const size_t length = field.as_count();
  if (length > kMaxPaddedLength) {
    field.fail(std::to_string(length) + " is past the longest padding supported (" + std::to_string(kMaxPaddedLength) +
               " tokens)");
  }
  return length;
}

// Keeps `length` tokens, cutting from `side`, as Encoding::truncate does.
void cut(std::vector<Token>& tokens, size_t length, const TruncationSettings& settings) {
  if (length >= tokens.size()) return;
  if (length > 0 && settings.stride >= length) {
    fail(ErrorKind::kUsage, settings.where + ": stride " + std::to_string(settings.stride) + " must be less than the " +
                                std::to_string(length) + " tokens a sequence is cut to");
  }
  if (settings.limit.side == Side::kRight) {
    tokens.resize(length);
  } else {
    tokens.erase(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(length));
  }
}

// The library's longest_first for two sequences: the shorter one is kept whole if the longer
// still gets as much room as it, else both are cut to half of max_length (the odd token to the
// longer one, or to the second when they are as long).
void cut_longest_first(std::vector<Token>& first, std::vector<Token>& second, const TruncationSettings& settings) {
  const size_t max_length = settings.limit.max_length;
  size_t shorter = first.size(), longer = second.size();
  const bool swapped = shorter > longer;
  if (swapped) std::swap(shorter, longer);
  longer = shorter > max_length ? shorter : std::max(shorter, max_length - shorter);
  if (shorter + longer > max_length) {
    shorter = max_length / 2;
    longer = shorter + max_length % 2;
  }
  if (swapped) std::swap(shorter, longer);
  cut(first, shorter, settings);
  cut(second, longer, settings);
}

}  // namespace

TruncationSettings parse_truncation(const JsonField& field) {
  const JsonField strategy_field = field["strategy"];
  const std::string strategy_name = strategy_field.as_string();
  Strategy strategy = Strategy::kLongestFirst;
  if (strategy_name == "OnlyFirst") {
    strategy = Strategy::kOnlyFirst;
  } else if (strategy_name == "OnlySecond") {
    strategy = Strategy::kOnlySecond;
  } else if (strategy_name != "LongestFirst") {
    strategy_field.fail("'" + strategy_name + "' is not a strategy (LongestFirst, OnlyFirst or OnlySecond)");
  }
  const auto direction = field.find("direction");
  return {Tokenizer::Truncation(field["max_length"].as_count(), strategy,
                                direction ? parse_side(*direction) : Side::kRight),
          field["stride"].as_count(), field.origin() + ": " + field.path()};
}

PaddingSettings parse_padding(const JsonField& field) {
  PaddingSettings settings;
  const JsonField strategy = field["strategy"];
  if (strategy.json().is_string()) {
    if (strategy.as_string() != "BatchLongest") strategy.fail("'" + strategy.as_string() + "' is not a strategy");
  } else {
    settings.fixed_length = parse_padded_length(strategy["Fixed"]);
  }
  settings.side = parse_side(field["direction"]);
  if (const auto multiple = field.find("pad_to_multiple_of")) settings.multiple = parse_padded_length(*multiple);
  settings.pad_id = field["pad_id"].as_token_id();
  settings.pad_type_id = field["pad_type_id"].as_type_id();
  settings.pad_token = field["pad_token"].as_string();
  return settings;
}

void truncate_sequences(std::vector<Token>& first, std::vector<Token>* second, const TruncationSettings& settings) {
  const size_t max_length = settings.limit.max_length;
  const size_t total = first.size() + (second ? second->size() : 0);
  if (max_length == 0) {
    cut(first, 0, settings);
    if (second) cut(*second, 0, settings);
    return;
  }
  if (total <= max_length) return;
  switch (settings.limit.strategy) {
    case Strategy::kLongestFirst:
      if (second) {
        cut_longest_first(first, *second, settings);
      } else {
        cut(first, max_length, settings);
      }
      return;
    case Strategy::kOnlyFirst:
    case Strategy::kOnlySecond: {
      const bool only_first = settings.limit.strategy == Strategy::kOnlyFirst;
      std::vector<Token>* target = only_first ? &first : second;
      if (target == nullptr) {
        fail(ErrorKind::kUsage, settings.where + ": only_second truncation needs a second sequence");
      }
      const size_t excess = total - max_length;
      if (target->size() <= excess) {
        fail(ErrorKind::kUsage, settings.where + ": the " + (only_first ? "first" : "second") + " sequence has " +
                                    std::to_string(target->size()) + " tokens, too few to take off the " +
                                    std::to_string(excess) + " that make the input longer than " +
                                    std::to_string(max_length));
      }
      cut(*target, target->size() - excess, settings);
      return;
    }
  }
}

void pad_encoding(Tokenizer::Encoding& encoding, const PaddingSettings& settings) {
  size_t length = settings.fixed_length.value_or(encoding.ids.size());
  if (settings.multiple > 0 && length % settings.multiple != 0) {
    length += settings.multiple - length % settings.multiple;
  }
  if (encoding.ids.size() >= length) return;
  const size_t count = length - encoding.ids.size();
  const auto fill = [&](auto& values, const auto& value) {
    values.insert(settings.side == Side::kLeft ? values.begin() : values.end(), count, value);
  };
  fill(encoding.ids, settings.pad_id);
  fill(encoding.type_ids, settings.pad_type_id);
  fill(encoding.tokens, settings.pad_token);
  fill(encoding.attention_mask, 0);
}

}  // namespace canrun
