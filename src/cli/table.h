// Plain-text tables for the CLI: columns padded to their widest cell.
#pragma once

#include <string>
#include <vector>

namespace canrun {

// Prints each row on one line, the first row being the header.
void print_aligned_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace canrun
