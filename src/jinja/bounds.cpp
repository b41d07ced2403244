#include "jinja/bounds.h"

#include <stdexcept>

namespace canrun::jinja {
namespace {

thread_local BuildBudget* current_budget = nullptr;

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

uint64_t size_product(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

size_t checked_string_bytes(uint64_t bytes) {
  if (bytes > kMaxStringBytes)
    throw std::invalid_argument("the template builds a string of " + std::to_string(bytes) + " bytes, more than the " +
                                mib(kMaxStringBytes) + " one string may hold");
  return static_cast<size_t>(bytes);
}

size_t checked_list_items(uint64_t items) {
  if (items > kMaxListItems)
    throw std::invalid_argument("the template builds a list of " + std::to_string(items) + " items, more than the " +
                                std::to_string(kMaxListItems) + " one list may hold");
  return static_cast<size_t>(items);
}

void append_bounded(std::string& text, std::string_view piece) {
  checked_string_bytes(uint64_t{text.size()} + piece.size());
  text.append(piece);
}

BuildBudget::BuildBudget() : outer_(current_budget) { current_budget = this; }

BuildBudget::~BuildBudget() { current_budget = outer_; }

void BuildBudget::count_string(size_t bytes) {
  if (!current_budget) return;
  checked_string_bytes(bytes);
  count(bytes);
}

void BuildBudget::count_list(size_t items, size_t bytes_per_item) {
  if (!current_budget) return;
  checked_list_items(items);
  count(size_product(items, bytes_per_item));
}

void BuildBudget::count(uint64_t bytes) {
  BuildBudget& budget = *current_budget;
  budget.built_ += bytes;
  if (budget.built_ > kMaxBuiltBytes)
    throw std::invalid_argument("the template builds more than " + mib(kMaxBuiltBytes) +
                                " of strings and lists in one render");
}

}  // namespace canrun::jinja
