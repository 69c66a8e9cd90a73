// The A/B runner on a real GPU: kernel arms validated, graph-timed over replicas like
// `mlalab bench`, with the SM clock read per round. Skips with the reason without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "ab/runner.h"
#include "ab/small_cpu_experiment.h"
#include "bench/bench_runner.h"
#include "bench/device_info.h"
#include "bench/require_gpu.h"
#include "core/layout.h"
#include "kernels/registry.h"

namespace mlalab::ab {
namespace {

constexpr int kBatch = 8;
constexpr int kContext = 1024;

Arm kernel_arm(std::string name, const std::string& variant, SplitPolicy split) {
  return Arm{.name = std::move(name),
             .prediction_pct = std::nullopt,
             .config = KernelArm{.variant = variant, .split = split, .cpu_threads = 0}};
}

// The last compiled variant that can run on this GPU in the layout (a full build ends with
// variants whose shared memory exceeds the H200's).
const kernels::Variant& last_runnable_variant(Layout layout) {
  const auto variants = kernels::compiled_variants();
  for (auto it = variants.rbegin(); it != variants.rend(); ++it) {
    int ctas = 0;
    const cudaError_t status = kernels::max_ctas_per_sm(*it, dims_of(layout).d_qk, &ctas);
    cudaGetLastError();  // a refused query is not sticky; keep it from the next call
    if (status == cudaSuccess && ctas > 0) return *it;
  }
  return variants.front();
}

// The first compiled variant against the last runnable one (itself with another split policy
// when only one is compiled), at two small points.
Experiment gpu_experiment() {
  const auto variants = kernels::compiled_variants();
  Experiment experiment = testing::small_cpu_experiment();
  experiment.name = "runner-gpu-test";
  experiment.hypothesis = "the runner times kernels like mlalab bench";
  experiment.backend = Backend::kCuda;
  experiment.sweep.concurrency = {1, kBatch};
  experiment.sweep.context.length = kContext;
  experiment.measure.launches_per_sample = 5;
  experiment.measure.max_minutes = 2.0;
  experiment.measure.throttle_fraction = 0.9;
  experiment.stats.max_rounds = 5;
  experiment.stats.time_budget_s = Settings{}.time_budget_s;
  experiment.baseline = kernel_arm("baseline", variants.front().name, SplitPolicy{});
  const kernels::Variant& other = last_runnable_variant(experiment.sweep.layout);
  experiment.variants = {kernel_arm(
      "other", other.name,
      other.name != variants.front().name
          ? SplitPolicy{}
          : SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = 2})};
  return experiment;
}

TEST(RunnerGpu, ValidatesAndTimesEveryKernelArm) {
  MLALAB_REQUIRE_GPU();
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  const RunOutcome outcome = run_experiment(gpu_experiment(), options);
  const RunRecord& record = outcome.record;
  ASSERT_FALSE(outcome.error) << *outcome.error << "\n" << progress.str();
  EXPECT_FALSE(record.partial) << record.partial_reason;
  EXPECT_EQ(record.environment.backend, Backend::kCuda);
  EXPECT_GT(record.environment.sm_count, 0);
  for (const ArmRecord& arm : record.arms) {
    EXPECT_TRUE(arm.valid) << arm.name << ": " << arm.invalid_reason;
    EXPECT_EQ(arm.code_hash.size(), 64u) << arm.name;
  }
  EXPECT_EQ(record.arms[0].code_hash, record.arms[1].code_hash);
  for (const PointRecord& point : record.points) {
    EXPECT_GE(point.rounds, 3);
    EXPECT_GE(point.splits, 1);
    EXPECT_NE(point.stop_reason, StopReason::kKeepGoing) << point.stop_text;
  }
  ASSERT_FALSE(record.samples.empty());
  for (const Sample& sample : record.samples) {
    EXPECT_GT(sample.time_us, 0.0);
    const int batch = record.points[sample.point].concurrency;
    EXPECT_NEAR(sample.value, batch / (sample.time_us * 1e-6), sample.value * 1e-9);
  }
  EXPECT_TRUE(record.analysis);
}

// The A/B arm and `mlalab bench` time one config by one method, so their medians agree up to
// the noise of two separate measurements (a wrong replica count would be off by a factor).
TEST(RunnerGpu, TimesAConfigLikeBench) {
  MLALAB_REQUIRE_GPU();
  const std::string variant = kernels::compiled_variants().front().name;
  Experiment experiment = gpu_experiment();
  experiment.sweep.concurrency = {kBatch};
  experiment.variants = {kernel_arm("fixed 2", variant,
                                    SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = 2})};
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  ASSERT_FALSE(outcome.error) << *outcome.error;
  std::vector<double> ab_us;
  for (const Sample& sample : outcome.record.samples) {
    if (sample.arm == 0) ab_us.push_back(sample.time_us);
  }
  ASSERT_FALSE(ab_us.empty());
  std::sort(ab_us.begin(), ab_us.end());
  const double ab_median_us = ab_us[ab_us.size() / 2];

  const bench::BenchRequest request{.layout = Layout::kV4, .num_heads = 16,
                                    .batches = {kBatch}, .contexts = {kContext},
                                    .page_size = 64, .variants = {variant}};
  const bench::BenchReport report = bench::run_cuda_bench(request);
  ASSERT_EQ(report.rows.size(), 1u);
  ASSERT_EQ(report.rows[0].status, bench::RowStatus::kOk) << report.rows[0].status_text();
  const double bench_us = report.rows[0].us;
  EXPECT_GT(ab_median_us, bench_us / 1.5) << "A/B " << ab_median_us << " us, bench " << bench_us;
  EXPECT_LT(ab_median_us, bench_us * 1.5) << "A/B " << ab_median_us << " us, bench " << bench_us;
}

}  // namespace
}  // namespace mlalab::ab
