#pragma once
// Child processes of the A/B lab: command arms (one run per sample) and worker arms (one
// long-lived process per other build) both spawn their child in its own process group, so
// that a timeout or Ctrl-C can kill the child's own children too and the terminal's Ctrl-C
// reaches only mlalab, with the signals mlalab handles back at their defaults.
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

namespace mlalab::ab {

// An owned file descriptor, closed when reset or destroyed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // Gives the descriptor up without closing it.
  void release() { fd_ = -1; }

 private:
  int fd_ = -1;
};

// "what: strerror(error)".
std::string errno_text(const char* what, int error);

// NAME=value strings of this process's environment with `overrides` applied.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides);

// posix_spawn of `path` with `argv` (null-terminated) and `environment`, its standard streams
// as `actions` set them, in a process group of its own and with SIGINT, SIGTERM and SIGPIPE
// at their defaults and no signal blocked. Everything is built before the spawn: posix_spawn
// runs no code of ours in the child, which is what a process with CUDA's threads needs.
// Returns posix_spawn's status (0 on success) and sets *pid.
int spawn_in_own_group(const std::string& path, std::vector<std::string> argv,
                       std::vector<std::string> environment,
                       const posix_spawn_file_actions_t* actions, pid_t* pid);

}  // namespace mlalab::ab
