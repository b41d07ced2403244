#include "serve/descriptor_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <string>

#include "util/error.h"

namespace canrun {

size_t raise_descriptor_limit(size_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    const rlim_t wanted = static_cast<rlim_t>(needed);
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? needed : static_cast<size_t>(limit.rlim_cur);
}

void require_descriptors_for(size_t max_connections) {
  const size_t needed = 2 * max_connections + 128;
  const size_t descriptors = raise_descriptor_limit(needed);
  if (descriptors < needed)
    fail(ErrorKind::kUsage, "--max-connections " + std::to_string(max_connections) + " needs " +
                                std::to_string(needed) + " file descriptors, but this process may open " +
                                std::to_string(descriptors) + " (ulimit -Hn): lower --max-connections");
}

}  // namespace canrun
