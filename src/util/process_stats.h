// Resource readings of the current process.
#pragma once

#include <cstdint>

namespace canrun {

// Peak resident set size of this program so far, in bytes (/proc/self/status VmHWM; getrusage's
// ru_maxrss where that cannot be read).
int64_t peak_resident_bytes();

}  // namespace canrun
