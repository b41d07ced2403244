#include "cli/table.h"

#include <algorithm>
#include <iostream>

namespace canrun {

void print_aligned_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& line : rows)
    for (size_t i = 0; i < line.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  for (const auto& line : rows) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i)
      text += i + 1 < line.size() ? line[i] + std::string(widths[i] - line[i].size() + 2, ' ') : line[i];
    std::cout << text << "\n";
  }
}

}  // namespace canrun
