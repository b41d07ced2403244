// What one render may build. A template ships with a checkpoint, so a hostile one could double a
// string or list in a loop, pad a string to any width, or make many large values and keep them.
// Every string and list is checked against these bounds before it is made, and all that a render
// makes is counted against one budget, which bounds its memory and the time it spends copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace canrun::jinja {

// Any one string a render makes, its output included.
inline constexpr size_t kMaxStringBytes = size_t{64} << 20;
// Any one list a render makes.
inline constexpr size_t kMaxListItems = size_t{1} << 20;
// All the strings and lists one render makes, together; a list counts its own slots, not the
// values they share. Eight times the output bound: a render copies its text a few times over.
inline constexpr uint64_t kMaxBuiltBytes = uint64_t{512} << 20;

// a * b, or UINT64_MAX where that would overflow: a size computed with it is refused, not wrapped.
uint64_t size_product(uint64_t a, uint64_t b);

// Throw std::invalid_argument naming the size and the bound when a string of `bytes` or a list of
// `items` would pass it; return the size, so a caller can reserve it.
size_t checked_string_bytes(uint64_t bytes);
size_t checked_list_items(uint64_t items);

// Appends `piece` to `text`, refusing before `text` would pass kMaxStringBytes.
void append_bounded(std::string& text, std::string_view piece);

// While one lives (for a render), each string and list made on this thread is counted against
// kMaxBuiltBytes; values made outside a render (the caller's variables) are not.
class BuildBudget {
 public:
  BuildBudget();
  ~BuildBudget();
  BuildBudget(const BuildBudget&) = delete;
  BuildBudget& operator=(const BuildBudget&) = delete;

  // Throw past the bound on one value, or once the render has made more than kMaxBuiltBytes.
  static void count_string(size_t bytes);
  static void count_list(size_t items, size_t bytes_per_item);

 private:
  static void count(uint64_t bytes);
  uint64_t built_ = 0;
  BuildBudget* outer_;
};

}  // namespace canrun::jinja
