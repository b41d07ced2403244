// Resource readings of the current process.
#pragma once

#include <cstdint>

namespace canrun {

// Peak resident set size so far, in bytes (getrusage's ru_maxrss).
int64_t peak_resident_bytes();

}  // namespace canrun
