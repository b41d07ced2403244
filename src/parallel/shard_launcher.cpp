#include "parallel/shard_launcher.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.h"

namespace canrun {
namespace {

// This process's argv, as the kernel recorded it (NUL-separated).
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string current;
  for (char c : all) {
    if (c != '\0') {
      current += c;
      continue;
    }
    args.push_back(current);
    current.clear();
  }
  if (args.empty()) fail(ErrorKind::kIo, "/proc/self/cmdline: cannot read this process's arguments");
  return args;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  fail(ErrorKind::kUsage, "--cores N > 1 starts its workers with Open MPI's '" + program +
                              "', which is not on PATH (Debian: apt-get install openmpi-bin)");
}

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
}

void set_thread_defaults(int cores) {
  const int available = available_cores();
  const int threads = std::max(1, available / cores);
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), /*overwrite=*/0);
  if (cores * threads > available) setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
}

}  // namespace

int run_workers(int cores, const std::vector<std::string>& arguments, const std::string& stderr_path) {
  const std::string mpirun = find_on_path("mpirun");
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) fail(ErrorKind::kIo, "/proc/self/exe: " + error.message());
  set_thread_defaults(cores);

  std::vector<std::string> command = {mpirun, "-np", std::to_string(cores), "--oversubscribe", "--bind-to", "none"};
  if (geteuid() == 0) command.push_back("--allow-run-as-root");
  // -x forwards these to workers on other hosts too (local ones inherit the environment).
  for (const char* name : {"OMP_NUM_THREADS", "OMP_WAIT_POLICY"})
    if (std::getenv(name) != nullptr) command.insert(command.end(), {"-x", name});
  command.push_back(self);
  command.insert(command.end(), arguments.begin(), arguments.end());

  std::vector<char*> argv;
  for (std::string& part : command) argv.push_back(part.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) fail(ErrorKind::kRuntime, std::string("fork for mpirun: ") + std::strerror(errno));
  if (child == 0) {
    if (!stderr_path.empty()) {
      const int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(126);
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // mpirun ends its workers when told to stop
    execv(mpirun.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) fail(ErrorKind::kRuntime, std::string("waiting for mpirun: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int run_sharded(int cores) {
  const std::vector<std::string> args = own_arguments();
  return run_workers(cores, {args.begin() + 1, args.end()});
}

}  // namespace canrun
