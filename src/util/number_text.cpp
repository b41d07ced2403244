#include "util/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

namespace canrun {
namespace {

template <typename T>
std::optional<std::string> whole_number_problem(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range) return "is out of range";
  if (error != std::errc() || stop != end)
    return std::is_floating_point_v<T> ? "is not a number" : "is not a whole number";
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(value)) return "is not finite";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> number_text_problem(std::string_view text, NumberKind kind) {
  if (text.empty()) return "is empty";
  // from_chars takes no sign for unsigned types; a '-' there must not wrap around either.
  if (kind == NumberKind::kUnsigned && text.front() == '-') return "must not be negative";
  // "nan", "inf" and "infinity" parse as doubles; none bounds anything.
  std::string lower;
  for (const char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  const std::string_view unsigned_part = std::string_view(lower).substr(lower.front() == '-' ? 1 : 0);
  if (unsigned_part.starts_with("nan") || unsigned_part.starts_with("inf")) return "is not finite";
  switch (kind) {
    case NumberKind::kSigned: return whole_number_problem<int64_t>(text);
    case NumberKind::kUnsigned: return whole_number_problem<uint64_t>(text);
    case NumberKind::kReal: return whole_number_problem<double>(text);
  }
  return "is not a number";
}

std::optional<double> read_real(std::string_view text) {
  if (number_text_problem(text, NumberKind::kReal)) return std::nullopt;
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace canrun
