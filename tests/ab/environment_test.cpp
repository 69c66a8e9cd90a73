// The host part of a run's environment: the /proc parsers on hand-made text, the share of the
// CPUs that other processes used computed by hand, the warnings and texts, and one live
// reading of this machine.
#include "ab/environment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlalab::ab {
namespace {

TEST(ParseLoadAverage, ReadsTheFirstThreeFields) {
  const auto load = parse_load_average("0.34 0.70 0.40 1/123 4567\n");
  ASSERT_TRUE(load);
  EXPECT_DOUBLE_EQ(load->load_1min, 0.34);
  EXPECT_DOUBLE_EQ(load->load_5min, 0.70);
  EXPECT_DOUBLE_EQ(load->load_15min, 0.40);
}

TEST(ParseLoadAverage, RefusesWhatIsNotALoadAverage) {
  EXPECT_FALSE(parse_load_average(""));
  EXPECT_FALSE(parse_load_average("0.34 0.70\n"));
  EXPECT_FALSE(parse_load_average("0.34 high 0.40 1/123 4567\n"));
  EXPECT_FALSE(parse_load_average("-1 0.70 0.40 1/123 4567\n"));
}

TEST(ParseCpuModel, TakesTheFirstModelName) {
  const std::string cpuinfo =
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "model\t\t: 1\n"
      "model name\t: AMD EPYC 7B13 64-Core Processor\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: another\n";
  EXPECT_EQ(parse_cpu_model(cpuinfo), "AMD EPYC 7B13 64-Core Processor");
}

TEST(ParseCpuModel, IsEmptyWithoutOne) {
  // arm64's /proc/cpuinfo names no model.
  EXPECT_EQ(parse_cpu_model("processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n"), "");
}

// Three CPUs, each line: user nice system idle iowait irq softirq steal guest guest_nice.
constexpr const char* kProcStat =
    "cpu  600 60 300 3000 30 3 3 6 100 0\n"
    "cpu0 100 10 50 1000 10 1 1 2 50 0\n"
    "cpu1 200 20 100 1000 10 1 1 2 50 0\n"
    "cpu2 300 30 150 1000 10 1 1 2 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

TEST(ParseCpuJiffies, SumsTheChosenCpusBusyAndTotal) {
  // cpu0: busy = 100 + 10 + 50 + 1 + 1 + 2 = 164, total = 164 + 1000 + 10 = 1174.
  // cpu2: busy = 300 + 30 + 150 + 1 + 1 + 2 = 484, total = 484 + 1000 + 10 = 1494.
  // guest (50, 0) is inside user already and is not added again.
  const auto jiffies = parse_cpu_jiffies(kProcStat, {0, 2});
  ASSERT_TRUE(jiffies);
  EXPECT_EQ(jiffies->busy, 164u + 484u);
  EXPECT_EQ(jiffies->total, 1174u + 1494u);
}

TEST(ParseCpuJiffies, NeedsEveryChosenCpu) {
  EXPECT_FALSE(parse_cpu_jiffies(kProcStat, {0, 3}));
  EXPECT_FALSE(parse_cpu_jiffies(kProcStat, {}));
  EXPECT_FALSE(parse_cpu_jiffies("cpu0 100 10 50\n", {0}));  // fewer than 8 states
}

TEST(OtherCpuShare, IsBusyTimeLessOursOverAllTime) {
  // 2 CPUs for 1 s at 100 jiffies per second: 200 jiffies in all, 120 of them busy. This
  // process used 0.5 s of CPU (50 jiffies), so others used 70 of 200: 35%.
  const CpuJiffies start{.busy = 1000, .total = 5000};
  const CpuJiffies end{.busy = 1120, .total = 5200};
  const auto share = other_cpu_share(start, end, 0.5, 100.0);
  ASSERT_TRUE(share);
  EXPECT_DOUBLE_EQ(*share, 0.35);
}

TEST(OtherCpuShare, ClampsTheTickMismatchAndNeedsElapsedTime) {
  // Our CPU time, measured in microseconds, can exceed the busy jiffies by up to a tick per
  // CPU: that is 0, not a negative share.
  EXPECT_DOUBLE_EQ(*other_cpu_share({.busy = 0, .total = 0}, {.busy = 100, .total = 200}, 1.02,
                                    100.0),
                   0.0);
  EXPECT_FALSE(other_cpu_share({.busy = 5, .total = 10}, {.busy = 5, .total = 10}, 0.0, 100.0));
}

TEST(GpusText, CountsIdenticalNamesInOrder) {
  EXPECT_EQ(gpus_text({}), "none");
  EXPECT_EQ(gpus_text({"NVIDIA H200"}), "NVIDIA H200");
  EXPECT_EQ(gpus_text({"NVIDIA H200", "NVIDIA H200", "NVIDIA A100"}),
            "2× NVIDIA H200, NVIDIA A100");
}

EnvironmentRecord two_thread_host(Backend backend) {
  EnvironmentRecord environment;
  environment.backend = backend;
  environment.host = "vm";
  environment.cpu_model = "AMD EPYC 7B13";
  environment.hardware_threads = 2;
  environment.usable_cpus = 2;
  return environment;
}

TEST(LoadWarning, WarnsWhenOthersUsedMoreThanATenth) {
  EnvironmentRecord environment = two_thread_host(Backend::kCpu);
  environment.load_at_start = {.load_1min = 6.0, .load_5min = 5.0, .load_15min = 4.0,
                               .other_cpu_share = 0.5, .share_window_s = 0.5};
  environment.load_at_end = {.load_1min = 2.0, .load_5min = 2.0, .load_15min = 2.0,
                             .other_cpu_share = 0.10, .share_window_s = 60.0};
  const auto start = start_load_warning(environment);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->rfind("other processes used 50% of the 2 usable CPUs at the start (over 0.5 s)",
                         0),
            0u)
      << *start;
  EXPECT_FALSE(end_load_warning(environment)) << "10% is the limit, not above it";
  environment.load_at_end.other_cpu_share = 0.11;
  const auto end = end_load_warning(environment);
  ASSERT_TRUE(end);
  EXPECT_NE(end->find("11% of the 2 usable CPUs during the run"), std::string::npos) << *end;
}

TEST(LoadWarning, NoneWithoutAReading) {
  EXPECT_FALSE(start_load_warning(two_thread_host(Backend::kCpu)));
  EXPECT_FALSE(end_load_warning(two_thread_host(Backend::kCpu)));
}

TEST(EnvironmentText, SaysWhatRanOnEveryBackend) {
  EnvironmentRecord cuda;
  cuda.backend = Backend::kCuda;
  cuda.gpu = "NVIDIA H200";
  cuda.sm_count = 132;
  EXPECT_EQ(ran_on_text(cuda), "on the cuda backend, NVIDIA H200 (132 SMs)");

  EXPECT_EQ(ran_on_text(two_thread_host(Backend::kCpu)),
            "on the cpu backend, host vm (AMD EPYC 7B13, 2 threads)");

  EnvironmentRecord commands = two_thread_host(Backend::kNone);
  commands.usable_cpus = 1;  // taskset -c 0
  commands.gpu = "2× NVIDIA H200";
  EXPECT_EQ(ran_on_text(commands),
            "as command arms on host vm (AMD EPYC 7B13, 2 threads, 1 usable; GPUs visible: "
            "2× NVIDIA H200)");
}

TEST(EnvironmentText, LoadReadings) {
  EnvironmentRecord environment = two_thread_host(Backend::kCpu);
  environment.load_at_start = {.load_1min = 0.34, .load_5min = 0.7, .load_15min = 0.4,
                               .other_cpu_share = 0.031, .share_window_s = 0.5};
  environment.load_at_end = {.load_1min = 1.95, .load_5min = 1.1, .load_15min = 0.62,
                             .other_cpu_share = std::nullopt, .share_window_s = 0.0};
  EXPECT_EQ(start_load_text(environment),
            "load average 0.34, 0.70, 0.40 (1, 5, 15 min); other processes used 3.1% of the 2 "
            "usable CPUs over 0.5 s");
  EXPECT_EQ(end_load_text(environment),
            "load average 1.95, 1.10, 0.62 (1, 5, 15 min), this run's own threads included; "
            "the share of other processes is unknown");
}

TEST(HostEnvironment, ReadsThisMachine) {
  const EnvironmentRecord host = host_environment();
  EXPECT_GE(host.hardware_threads, 1);
  EXPECT_GE(host.usable_cpus, 1);
  EXPECT_FALSE(host.host.empty());
  EXPECT_EQ(cpu_environment().backend, Backend::kCpu);
  EXPECT_TRUE(cpu_environment().gpu.empty()) << "the CPU backend runs on no GPU";
  EXPECT_EQ(command_environment().backend, Backend::kNone);
  EXPECT_FALSE(command_environment().gpu.empty()) << "the visible GPUs, or none";
}

TEST(HostLoadReadings, ShareIsAFractionOverTheWindow) {
  const CpuUsage usage = read_cpu_usage();
  const HostLoad start = read_start_load(usage);
  ASSERT_TRUE(start.load_1min);
  ASSERT_TRUE(start.other_cpu_share);
  EXPECT_GE(*start.other_cpu_share, 0.0);
  EXPECT_LE(*start.other_cpu_share, 1.0);
  // The window is about kStartWindowS; the jiffies tick at 100 Hz and the sleep may run over.
  EXPECT_NEAR(start.share_window_s, kStartWindowS, 0.2);
  const HostLoad end = read_end_load(usage);
  EXPECT_TRUE(end.load_1min);
  EXPECT_TRUE(end.other_cpu_share);
  EXPECT_GE(end.share_window_s, start.share_window_s);
}

}  // namespace
}  // namespace mlalab::ab
