// Command arms: running a shell command (environment, output, timeout, stop signal) and
// reading its metric.
#include "ab/arms.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mlalab::ab {
namespace {

const std::regex kMetric("metric: ([0-9.eE+-]+)");

TEST(RunShellCommand, CapturesStdoutAndTheExitStatus) {
  const CommandResult result = run_shell_command("echo 'metric: 42'", {}, 10.0);
  EXPECT_EQ(result.output, "metric: 42\n");
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_FALSE(result.timed_out);
  std::string failure;
  EXPECT_EQ(extract_metric(result.output, kMetric, &failure), 42.0) << failure;
}

TEST(RunShellCommand, AppliesTheEnvironmentOverrides) {
  const CommandResult result = run_shell_command(
      "echo \"$MLALAB_TEST_A $MLALAB_CONCURRENCY\"",
      {{"MLALAB_TEST_A", "x y"}, {"MLALAB_CONCURRENCY", "16"}}, 10.0);
  EXPECT_EQ(result.output, "x y 16\n");
}

TEST(RunShellCommand, ReportsAFailureWithTheEndOfStderr) {
  const CommandResult result = run_shell_command("echo oops >&2; exit 7", {}, 10.0);
  EXPECT_EQ(result.exit_status, 7);
  EXPECT_EQ(result.error_tail, "oops\n");
}

TEST(RunShellCommand, KillsACommandPastItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = run_shell_command("sleep 5; echo late", {}, 0.2);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.output, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(RunShellCommand, KillsTheWholeProcessGroupOnTheStopSignal) {
  std::atomic<int> stop{0};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(SIGINT);
  });
  const auto start = std::chrono::steady_clock::now();
  // A child in the background holds the pipe open: only killing the group ends it.
  const CommandResult result = run_shell_command("sleep 5 & sleep 5; wait", {}, 30.0, &stop);
  stopper.join();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(ExtractMetric, TakesTheFirstCaptureGroupAsAPositiveNumber) {
  std::string failure;
  EXPECT_EQ(extract_metric("warmup\nmetric: 1.5e3 tok/s\nmetric: 7\n", kMetric, &failure),
            1500.0);
  EXPECT_FALSE(extract_metric("no number here\n", kMetric, &failure));
  EXPECT_NE(failure.find("matched nothing"), std::string::npos) << failure;
  EXPECT_NE(failure.find("no number here"), std::string::npos) << failure;
  EXPECT_FALSE(extract_metric("metric: 0\n", kMetric, &failure));
  EXPECT_NE(failure.find("positive"), std::string::npos) << failure;
  EXPECT_FALSE(extract_metric("metric: 1.2.3\n", kMetric, &failure));
  EXPECT_NE(failure.find("not a number"), std::string::npos) << failure;
}

TEST(PrepareCommandArm, RefusesARegexWithoutACaptureGroup) {
  const CommandArm arm{.command = "echo 1", .env = {}, .metric_regex = "[0-9]+",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 1.0};
  const Preparation preparation = prepare_command_arm(arm, 1, nullptr);
  EXPECT_FALSE(preparation.arm);
  EXPECT_NE(preparation.invalid_reason.find("capture group"), std::string::npos);
}

TEST(PrepareCommandArm, SamplesTheMetricAtTheConcurrency) {
  const CommandArm arm{.command = "echo \"metric: $MLALAB_CONCURRENCY\"", .env = {},
                       .metric_regex = "metric: ([0-9]+)",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 10.0};
  const Preparation preparation = prepare_command_arm(arm, 32, nullptr);
  ASSERT_TRUE(preparation.arm) << preparation.invalid_reason;
  const Measurement measurement = preparation.arm->measure();
  EXPECT_EQ(measurement.value, 32.0) << measurement.failure;
}

}  // namespace
}  // namespace mlalab::ab
