#include "cli/stop_signal.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace mlalab::cli {
namespace {

constexpr int kSignalExitBase = 128;  // the shell's convention: killed by signal N → 128 + N

std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

// When the first stop signal arrived (CLOCK_MONOTONIC, ns). A sender may deliver one request
// twice within microseconds (coreutils timeout signals the process, then its process group):
// the same signal again within kRepeatWindowNs is that request, not a second one. A person's
// second Ctrl-C comes far later.
constexpr std::int64_t kRepeatWindowNs = 100'000'000;
std::atomic<std::int64_t> g_first_signal_ns{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// The handler's messages, composed before it is installed: a handler may only write bytes.
constexpr std::size_t kMessageBytes = 512;
std::array<char, kMessageBytes> g_stopping{};
std::array<char, kMessageBytes> g_exiting{};

void compose(std::array<char, kMessageBytes>& buffer, const std::string& text) {
  const std::size_t length = std::min(text.size(), buffer.size() - 1);
  std::memcpy(buffer.data(), text.data(), length);
  buffer[length] = '\0';
}

void write_message(const std::array<char, kMessageBytes>& message) {
  [[maybe_unused]] const ssize_t written =
      write(STDERR_FILENO, message.data(), std::strlen(message.data()));
}

extern "C" void handle_stop_signal(int signal_number) {
  int expected = 0;
  if (g_stop_signal.compare_exchange_strong(expected, signal_number)) {
    // (The same signal stays blocked while its handler runs, so a repeat sees this time.)
    g_first_signal_ns.store(monotonic_ns());
    write_message(g_stopping);
    return;
  }
  if (expected == signal_number &&
      monotonic_ns() - g_first_signal_ns.load() < kRepeatWindowNs) {
    return;
  }
  write_message(g_exiting);
  _exit(kSignalExitBase + signal_number);
}

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

}  // namespace

StopSignalScope::StopSignalScope(const std::string& command, const std::string& kept) {
  compose(g_stopping, "\n" + command +
                          ": stopping after the current sample, then writing what was measured "
                          "(interrupt again to exit at once)\n");
  compose(g_exiting, "\n" + command + ": interrupted again: exiting now; " + kept + "\n");
  g_stop_signal.store(0);
  g_first_signal_ns.store(0);
  struct sigaction action {};
  action.sa_handler = handle_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

const std::atomic<int>& StopSignalScope::signal() { return g_stop_signal; }

}  // namespace mlalab::cli
