// One reading of a number given as text (a command-line value, a size): the whole text must be
// the number, nothing before or after it, finite and within its type's range. Whatever a
// number bounds (a timeout, a body limit, a price) must never be NaN, an infinity or empty,
// which would disable the bound instead of setting it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace canrun {

enum class NumberKind { kSigned, kUnsigned, kReal };  // int64_t, uint64_t, double

// Why `text` is not a number of `kind` ("is empty", "is not finite", ...); null when it is one.
std::optional<std::string> number_text_problem(std::string_view text, NumberKind kind);

// `text` as a finite double; null when number_text_problem says it is not one.
std::optional<double> read_real(std::string_view text);

}  // namespace canrun
