#include "lab/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "util/error.h"

namespace canrun {
namespace {

std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;) text.append(buffer, n);
  return text;
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, double timeout_s, int64_t memory_limit_bytes)
    : timeout_s_(timeout_s) {
  out_ = std::tmpfile();
  err_ = std::tmpfile();
  if (!out_ || !err_) fail(ErrorKind::kIo, std::string("cannot create temporary files for a child: ") + std::strerror(errno));
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const int out_fd = fileno(out_);
  const int err_fd = fileno(err_);
  start_ = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) fail(ErrorKind::kIo, std::string("cannot fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    setpgid(0, 0);  // its own group: the timeout kills it and anything it started
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before the line above
    if (memory_limit_bytes > 0) {
      const rlimit limit{static_cast<rlim_t>(memory_limit_bytes), static_cast<rlim_t>(memory_limit_bytes)};
      setrlimit(RLIMIT_AS, &limit);
    }
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here, so a kill right after start reaches the group
}

ChildProcess::~ChildProcess() {
  if (!done_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_) std::fclose(out_);
  if (err_) std::fclose(err_);
}

bool ChildProcess::poll() {
  if (done_) return true;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed > timeout_s_ && !outcome_.timed_out) {
    outcome_.timed_out = true;
    kill(-pid_, SIGKILL);
  }
  int status = 0;
  rusage usage{};
  const pid_t waited = wait4(pid_, &status, outcome_.timed_out ? 0 : WNOHANG, &usage);
  if (waited == 0) return false;
  if (waited < 0) fail(ErrorKind::kIo, std::string("wait4: ") + std::strerror(errno));
  kill(-pid_, SIGKILL);  // anything the check left behind in its group
  done_ = true;
  outcome_.seconds = elapsed;
  if (WIFEXITED(status)) outcome_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome_.signal = WTERMSIG(status);
  outcome_.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  outcome_.out = read_all(out_);
  outcome_.err = read_all(err_);
  return true;
}

ChildOutcome run_to_end(const std::vector<std::string>& argv, double timeout_s, int64_t memory_limit_bytes) {
  ChildProcess child(argv, timeout_s, memory_limit_bytes);
  while (!child.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return child.outcome();
}

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  const size_t begin = text.rfind('\n', end);
  const size_t first = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(first, end - first + 1);
}

}  // namespace canrun
