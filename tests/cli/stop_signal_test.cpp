#include "cli/stop_signal.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

namespace mlalab::cli {
namespace {

// The first SIGTERM asks the run to stop; the same signal again at once is that request
// delivered twice (coreutils timeout signals the process, then its process group), not a
// second one. Without the window this process would _exit(143) at the second raise.
TEST(StopSignal, TheSameSignalAgainAtOnceIsTheSameRequest) {
  const StopSignalScope scope("mlalab test", "nothing");
  ASSERT_EQ(raise(SIGTERM), 0);  // handled before raise returns
  EXPECT_EQ(StopSignalScope::signal().load(), SIGTERM);
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(StopSignalScope::signal().load(), SIGTERM);
}

// A person's second Ctrl-C, later, exits at once with the shell's status for the signal.
TEST(StopSignalDeathTest, ASecondRequestLaterExitsAtOnce) {
  EXPECT_EXIT(
      {
        const StopSignalScope scope("mlalab test", "nothing");
        raise(SIGINT);
        usleep(200'000);
        raise(SIGINT);
      },
      ::testing::ExitedWithCode(128 + SIGINT), "interrupted again: exiting now; nothing");
}

// Another signal is another request, however soon.
TEST(StopSignalDeathTest, AnotherSignalAtOnceExitsAtOnce) {
  EXPECT_EXIT(
      {
        const StopSignalScope scope("mlalab test", "nothing");
        raise(SIGTERM);
        raise(SIGINT);
      },
      ::testing::ExitedWithCode(128 + SIGINT), "interrupted again");
}

}  // namespace
}  // namespace mlalab::cli
