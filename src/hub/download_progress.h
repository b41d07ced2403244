// A pull with its progress on stderr: one bar of bytes, files and speed, redrawn in place on a
// terminal; a line per file fetched otherwise (logs, CI).
#pragma once

#include "hub/hub_download.h"

namespace canrun {

PullResult pull_with_progress(const PullOptions& options, const HubSettings& settings);

}  // namespace canrun
