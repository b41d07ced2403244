// A pull's progress on the terminal: one bar of bytes, files and speed, redrawn in place on a
// terminal; a line per file fetched otherwise (logs, CI).
#pragma once

#include <ostream>

#include "hub/hub_download.h"

namespace canrun {

PullProgress download_progress(std::ostream& out, bool terminal);

}  // namespace canrun
