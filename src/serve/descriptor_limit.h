// Open connections cost a file descriptor each, and the usual soft limit (1024) is below what
// --max-connections allows: the server raises its own soft limit towards the hard one.
#pragma once

#include <cstddef>

namespace canrun {

// Raises the soft RLIMIT_NOFILE to `needed`, or to the hard limit when that is lower; returns
// the soft limit in force afterwards.
size_t raise_descriptor_limit(size_t needed);

// Raises the limit for a connection gate of `max_connections`: those, as many again on their way
// out (refused or lingering), and the server's own files. Throws a usage error naming
// --max-connections when the hard limit is too low.
void require_descriptors_for(size_t max_connections);

}  // namespace canrun
