// Worker arms on a real GPU: the same variant in this process and in `mlalab worker` of the
// built binary, interleaved. Both must pass the reference check and, being the same kernel on
// the same inputs, time alike. Skips with the reason without a GPU or without the binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ab/runner.h"
#include "ab/small_cpu_experiment.h"
#include "bench/require_gpu.h"
#include "core/median.h"
#include "kernels/registry.h"

namespace mlalab::ab {
namespace {

// The mlalab binary of this build: ../bin/mlalab from this test binary (build/tests/).
std::filesystem::path built_mlalab() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return self.parent_path().parent_path() / "bin" / "mlalab";
}

TEST(WorkerGpu, AnArmInAWorkerTimesLikeTheSameArmHere) {
  MLALAB_REQUIRE_GPU();
  const std::filesystem::path binary = built_mlalab();
  if (access(binary.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no mlalab binary at " << binary << " (built beside this test binary)";
  }
  const std::string variant = kernels::compiled_variants().front().name;
  Experiment experiment = testing::small_cpu_experiment();
  experiment.name = "worker-gpu-test";
  experiment.hypothesis = "a kernel in a worker process times like the same kernel here (0 %)";
  experiment.backend = Backend::kCuda;
  experiment.sweep.concurrency = {8};
  experiment.sweep.context.length = 1024;
  experiment.measure.launches_per_sample = 10;
  experiment.measure.throttle_fraction = 0.9;
  experiment.stats.min_rounds = 6;
  experiment.stats.max_rounds = 8;
  experiment.stats.time_budget_s = 30.0;
  testing::here_and_in_a_worker(
      experiment, KernelArm{.variant = variant, .split = {}, .cpu_threads = 0}, binary.string());
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  const RunOutcome outcome = run_experiment(experiment, options);
  ASSERT_FALSE(outcome.error) << *outcome.error << "\n" << progress.str();
  const RunRecord& record = outcome.record;
  std::vector<std::vector<double>> times(record.arms.size());
  for (const ArmRecord& arm : record.arms) {
    ASSERT_TRUE(arm.valid) << arm.name << ": " << arm.invalid_reason << "\n" << progress.str();
  }
  for (const Sample& sample : record.samples) times[sample.arm].push_back(sample.time_us);
  ASSERT_GE(times[0].size(), 6u);
  ASSERT_GE(times[2].size(), 6u);
  // The same kernel, graph-timed alike: the medians agree far better than 10 %.
  const double here = median(times[0]);
  const double worker = median(times[2]);
  EXPECT_GT(here, 0.0);
  EXPECT_NEAR(worker / here, 1.0, 0.1) << "here " << here << " µs, in a worker " << worker
                                       << " µs";
}

}  // namespace
}  // namespace mlalab::ab
