#pragma once
// Ctrl-C and SIGTERM for the long-running subcommands (ab, tune): the first asks the run to
// stop cleanly (it finishes the current sample, then writes what it measured, marked partial)
// and says so at once, since the current sample may take a while; a second one exits at once,
// saying what the output already holds (the same signal again within 100 ms is taken for the
// first one delivered twice, as `timeout` does).
#include <atomic>
#include <string>

namespace mlalab::cli {

// Installs the handler for SIGINT and SIGTERM for its lifetime, then puts back what was there.
// One scope at a time.
class StopSignalScope {
 public:
  // `command` names the subcommand in the messages ("mlalab tune"); `kept` says what the
  // output holds if the second signal exits at once ("the table holds every finished key").
  StopSignalScope(const std::string& command, const std::string& kept);
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;
  ~StopSignalScope();

  // The signal that asked the run to stop, 0 while none did: the runners poll it between
  // samples. Lock-free, so the handler may set it.
  static const std::atomic<int>& signal();
};

}  // namespace mlalab::cli
