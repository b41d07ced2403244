// Running one command in its own process group with a wall-time and an address-space limit,
// capturing its output: how the sweep isolates each model's check.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace canrun {

struct ChildOutcome {
  bool timed_out = false;  // killed by us at the wall-time limit
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal ended it
  std::string out;         // stdout and stderr, whole
  std::string err;
  int64_t peak_rss_bytes = 0;  // the child's, from wait4
  double seconds = 0;
};

class ChildProcess {
 public:
  // Starts argv[0] (a path, or a name looked up in PATH) with `argv`. memory_limit_bytes > 0
  // sets RLIMIT_AS in the child.
  // The child dies with the parent (PR_SET_PDEATHSIG), so a killed sweep leaves no orphans.
  ChildProcess(const std::vector<std::string>& argv, double timeout_s, int64_t memory_limit_bytes);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Non-blocking: true once the child has ended (kills its whole group past the deadline);
  // then outcome() holds what happened.
  bool poll();
  const ChildOutcome& outcome() const { return outcome_; }

 private:
  pid_t pid_ = -1;
  std::FILE* out_ = nullptr;  // anonymous temporary files: no pipe to fill up and block on
  std::FILE* err_ = nullptr;
  std::chrono::steady_clock::time_point start_;
  double timeout_s_ = 0;
  bool done_ = false;
  ChildOutcome outcome_;
};

// "SIGSEGV" for SIGSEGV.
std::string signal_name(int signal);

// Starts `argv` as ChildProcess does and waits for its end (at most `timeout_s`).
ChildOutcome run_to_end(const std::vector<std::string>& argv, double timeout_s, int64_t memory_limit_bytes = 0);

// The last non-empty line of a child's output (its error or its result), without the line break.
std::string last_line(const std::string& text);

}  // namespace canrun
