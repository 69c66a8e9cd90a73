// The report's environment: what ran the arms (the "What was tested" line and the How
// section's Environment item), how busy the host was at the start and at the end, and the
// warning when other processes held the CPUs.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/markdown_report.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

std::string markdown_of(const ab::RunRecord& record) {
  std::ostringstream out;
  MarkdownReport().write(record, out);
  return out.str();
}

ab::EnvironmentRecord host(std::string backend) {
  ab::EnvironmentRecord environment;
  environment.backend = std::move(backend);
  environment.commit = "0123456789ab";
  environment.host = "vm";
  environment.cpu_model = "AMD EPYC 7B13";
  environment.hardware_threads = 2;
  environment.usable_cpus = 2;
  environment.load_at_start = {.load_1min = 0.34, .load_5min = 0.7, .load_15min = 0.4,
                               .other_cpu_share = 0.031, .share_window_s = 0.5};
  environment.load_at_end = {.load_1min = 1.95, .load_5min = 1.1, .load_15min = 0.62,
                             .other_cpu_share = 0.042, .share_window_s = 61.0};
  return environment;
}

ab::RunRecord cpu_run() {
  ab::RunRecord record = testing::synthetic_record();
  record.experiment.backend = "cpu";
  record.environment = host("cpu");
  return record;
}

TEST(MarkdownReportEnvironment, CpuRunNamesTheHostAndItsLoadAtStartAndEnd) {
  const std::string text = markdown_of(cpu_run());
  EXPECT_NE(text.find("Experiment `warps_and_stages` (file `experiments/warps_and_stages.toml`) "
                      "on the cpu backend, host vm (AMD EPYC 7B13, 2 threads): 5 variants"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Environment.** The cpu backend on host vm (AMD EPYC 7B13, 2 "
                      "threads); commit `0123456789ab`.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Host load.** At the start: load average 0.34, 0.70, 0.40 (1, 5, 15 "
                      "min); other processes used 3.1% of the 2 usable CPUs over 0.5 s. At the "
                      "end: load average 1.95, 1.10, 0.62 (1, 5, 15 min), this run's own threads "
                      "included; other processes used 4.2% of the 2 usable CPUs during the "
                      "run.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("**Warning:**"), std::string::npos) << "3-4% is an idle machine";
}

TEST(MarkdownReportEnvironment, WarnsWhenOtherProcessesHeldTheCpus) {
  ab::RunRecord record = cpu_run();
  record.environment.usable_cpus = 1;  // taskset -c 0
  record.environment.load_at_end.other_cpu_share = 0.37;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("host vm (AMD EPYC 7B13, 2 threads, 1 usable)"), std::string::npos);
  EXPECT_NE(text.find("- **Warning:** other processes used 37% of the 1 usable CPU during the run, "
                      "more than 10%: "),
            std::string::npos)
      << text;
}

TEST(MarkdownReportEnvironment, CommandRunSaysCommandArmsNotABackend) {
  ab::RunRecord record = testing::synthetic_record();
  record.experiment.backend = ab::kNoBackend;
  record.environment = host(ab::kNoBackend);
  record.environment.gpu = "2× NVIDIA H200";
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("(file `experiments/warps_and_stages.toml`) as command arms on host vm (AMD "
                      "EPYC 7B13, 2 threads; GPUs visible: 2× NVIDIA H200): 5 variants"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Environment.** Command arms, no kernel backend, on host vm (AMD EPYC "
                      "7B13, 2 threads); GPUs visible to the commands: 2× NVIDIA H200; commit "
                      "`0123456789ab`.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("backend:"), std::string::npos);
  EXPECT_EQ(text.find("on the cuda backend"), std::string::npos);
}

TEST(MarkdownReportEnvironment, CudaRunKeepsTheGpuAndAddsTheHost) {
  ab::RunRecord record = testing::synthetic_record();
  const ab::EnvironmentRecord cpu = host("cuda");
  record.environment.cpu_model = cpu.cpu_model;
  record.environment.hardware_threads = cpu.hardware_threads;
  record.environment.usable_cpus = cpu.usable_cpus;
  record.environment.load_at_start = cpu.load_at_start;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("on the cuda backend, NVIDIA H200 (132 SMs): 5 variants"),
            std::string::npos);
  EXPECT_NE(text.find("CUDA runtime 13.0; commit `0123456789ab`; host gpu-node-7 (AMD EPYC "
                      "7B13, 2 threads); backend cuda.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("At the end: not read (the run had not ended)."), std::string::npos)
      << text;
}

TEST(MarkdownReportEnvironment, ARecordWithoutLoadReadingsSaysSo) {
  // Results of schema 1 predate the readings.
  EXPECT_NE(markdown_of(testing::synthetic_record()).find("- **Host load.** Not recorded.\n"),
            std::string::npos);
}

}  // namespace
}  // namespace mlalab::report
