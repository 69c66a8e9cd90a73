// Command arms: running a shell command (environment, output, timeout, stop signal) and
// reading its metric. Kernel arms' code hashes on the GPU, which need no GPU.
#include "ab/arms.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "ab/sha256.h"
#include "dispatch/tuning_table.h"
#include "kernels/registry.h"

namespace mlalab::ab {
namespace {

const std::regex kMetric("metric: ([0-9.eE+-]+)");

TEST(RunShellCommand, CapturesStdoutAndTheExitStatus) {
  const CommandResult result = run_shell_command("echo 'metric: 42'", {}, 10.0);
  EXPECT_EQ(result.output, "metric: 42\n");
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_FALSE(result.timed_out);
  std::string failure;
  EXPECT_EQ(extract_metric(result, kMetric, &failure), 42.0) << failure;
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

CommandResult printed(std::string stdout_text, std::string stderr_text = {}) {
  CommandResult result;
  result.output = std::move(stdout_text);
  result.error_tail = std::move(stderr_text);
  result.exit_status = 0;
  return result;
}

TEST(ExtractMetric, TakesTheFirstCaptureGroupAsAPositiveNumber) {
  std::string failure;
  EXPECT_EQ(extract_metric(printed("warmup\nmetric: 1.5e3 tok/s\nmetric: 7\n"), kMetric,
                           &failure),
            1500.0);
  EXPECT_FALSE(extract_metric(printed("no number here\n"), kMetric, &failure));
  EXPECT_NE(failure.find("matched nothing"), std::string::npos) << failure;
  EXPECT_NE(failure.find("no number here"), std::string::npos) << failure;
  EXPECT_FALSE(extract_metric(printed("metric: 0\n"), kMetric, &failure));
  EXPECT_NE(failure.find("positive"), std::string::npos) << failure;
  EXPECT_FALSE(extract_metric(printed("metric: 1.2.3\n"), kMetric, &failure));
  EXPECT_NE(failure.find("not a number"), std::string::npos) << failure;
}

// The experiment file's key is `metric`; messages use that name, and say where they looked.
TEST(ExtractMetric, NamesTheKeyAndSaysTheMetricIsReadFromStdout) {
  std::string failure;
  EXPECT_FALSE(extract_metric(printed("no number here\n"), kMetric, &failure));
  EXPECT_EQ(failure.find("metric_regex"), std::string::npos) << failure;
  EXPECT_NE(failure.find("metric matched nothing on stdout"), std::string::npos) << failure;

  // A benchmark that prints its number on stderr: not "the output was empty".
  EXPECT_FALSE(extract_metric(printed("", "log line\nmetric: 42\n"), kMetric, &failure));
  EXPECT_NE(failure.find("stdout was empty"), std::string::npos) << failure;
  EXPECT_NE(failure.find("stderr ended with: metric: 42"), std::string::npos) << failure;

  EXPECT_FALSE(extract_metric(printed(""), kMetric, &failure));
  EXPECT_NE(failure.find("stdout and stderr were both empty"), std::string::npos) << failure;
}

TEST(PrepareCommandArm, RefusesARegexWithoutACaptureGroup) {
  const CommandArm arm{.command = "echo 1", .env = {}, .metric_regex = "[0-9]+",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 1.0};
  const Preparation preparation = prepare_command_arm(arm, 1, nullptr);
  EXPECT_FALSE(preparation.arm);
  EXPECT_NE(preparation.invalid_reason.find("capture group"), std::string::npos);
  EXPECT_EQ(preparation.invalid_reason.rfind("metric '[0-9]+'", 0), 0u)
      << preparation.invalid_reason;
}

TEST(PrepareCommandArm, SamplesTheMetricAtTheConcurrency) {
  const CommandArm arm{.command = "echo \"metric: $MLALAB_CONCURRENCY\"", .env = {},
                       .metric_regex = "metric: ([0-9]+)",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 10.0};
  const Preparation preparation = prepare_command_arm(arm, 32, nullptr);
  ASSERT_TRUE(preparation.arm) << preparation.invalid_reason;
  const Measurement measurement = preparation.arm->measure(SampleLimits{});
  EXPECT_EQ(measurement.value, 32.0) << measurement.failure;
  EXPECT_EQ(measurement.cut, SampleCut::kNone);
}

// The run's deadline bounds a sample like the arm's own timeout, but it is a cut, not a
// failure of the arm: the sample is discarded and the arm stays valid.
TEST(PrepareCommandArm, TheRunsDeadlineCutsARunningCommand) {
  const CommandArm arm{.command = "sleep 30; echo 'metric: 1'", .env = {},
                       .metric_regex = "metric: ([0-9]+)",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 20.0};
  const Preparation preparation = prepare_command_arm(arm, 1, nullptr);
  ASSERT_TRUE(preparation.arm) << preparation.invalid_reason;
  const auto start = std::chrono::steady_clock::now();
  const Measurement measurement = preparation.arm->measure(
      SampleLimits{.deadline = start + std::chrono::milliseconds(300)});
  EXPECT_EQ(measurement.cut, SampleCut::kDeadline);
  EXPECT_FALSE(measurement.value);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

// When the arm's own timeout comes first, it is the arm's failure.
TEST(PrepareCommandArm, ATimeoutBeforeTheDeadlineIsAFailure) {
  const CommandArm arm{.command = "sleep 30", .env = {}, .metric_regex = "metric: ([0-9]+)",
                       .direction = Direction::kHigherIsBetter, .timeout_s = 0.2};
  const Preparation preparation = prepare_command_arm(arm, 1, nullptr);
  ASSERT_TRUE(preparation.arm) << preparation.invalid_reason;
  const Measurement measurement = preparation.arm->measure(
      SampleLimits{.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60)});
  EXPECT_EQ(measurement.cut, SampleCut::kNone);
  EXPECT_FALSE(measurement.value);
  EXPECT_NE(measurement.failure.find("timed out after 0.2 s"), std::string::npos)
      << measurement.failure;
}

// ---------------------------------------------------------------------------------------------
// Kernel arms' code hashes (cuda_code_hash)

TEST(CudaCodeHash, AVariantArmHasItsVariantsHashInEitherForm) {
  const kernels::Variant& variant = kernels::compiled_variants().front();
  const KernelArm arm{.variant = variant.name, .split = {}};
  EXPECT_EQ(cuda_code_hash(arm), variant.code_hash);
  EXPECT_EQ(cuda_code_hash(arm, CodeHashForm::kWithNames), variant.code_hash_with_names);
  EXPECT_EQ(cuda_code_hash(KernelArm{.variant = "h8_t8_w1_s1", .split = {}}), "");
}

// A tuned arm's hash is that of "name=hash" lines of its table's candidates, with this build's
// hashes (the table's own may be older): so a rebuild with other code changes it.
TEST(CudaCodeHash, ATunedArmHashesItsTablesCandidatesCodeHere) {
  if (kernels::compiled_variants().size() < 2) {
    GTEST_SKIP() << "needs two compiled variants; this build has "
                 << kernels::compiled_variants().size();
  }
  const kernels::Variant& first = kernels::compiled_variants()[0];
  const kernels::Variant& second = kernels::compiled_variants()[1];
  dispatch::TuningTable table;
  table.identity = {.gpu = "NVIDIA H200", .sm_count = 132, .compute_capability = 90,
                    .cuda_driver = "13.0", .cuda_runtime = "13.0", .layout = Layout::kV3,
                    .num_heads = 16, .page_size = 64,
                    .candidates = {{.variant = first.name, .code_hash = "recorded"},
                                   {.variant = second.name, .code_hash = "recorded"},
                                   {.variant = "h8_t8_w1_s1", .code_hash = "recorded"}}};
  table.batch_buckets = dispatch::default_batch_buckets();
  table.context_buckets = dispatch::default_context_buckets();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "mlalab_CudaCodeHash_tuned_arm.json";
  dispatch::write_table(table, path.string());
  const KernelArm tuned{.variant = "", .split = {}, .table = path.string()};
  EXPECT_EQ(cuda_code_hash(tuned),
            sha256_hex(first.name + "=" + first.code_hash + "\n" + second.name + "=" +
                       second.code_hash + "\nh8_t8_w1_s1=\n"));
  EXPECT_EQ(cuda_code_hash(tuned, CodeHashForm::kWithNames),
            sha256_hex(first.name + "=" + first.code_hash_with_names + "\n" + second.name +
                       "=" + second.code_hash_with_names + "\nh8_t8_w1_s1=\n"));
  std::filesystem::remove(path);
  EXPECT_THROW(cuda_code_hash(tuned), dispatch::TableError);
}

}  // namespace
}  // namespace mlalab::ab
