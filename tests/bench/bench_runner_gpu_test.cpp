// The CUDA benchmark path end to end on a real GPU; skips with the reason without one.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "bench/bandwidth.h"
#include "bench/bench_runner.h"
#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "bench/require_gpu.h"
#include "kernels/registry.h"

namespace mlalab::bench {
namespace {

// Far above any HBM today (H200: 4.8 TB/s): a larger figure means the timing is broken.
constexpr double kImplausibleGbps = 20000.0;

TEST(DeviceInfo, DescribesTheDevice) {
  MLALAB_REQUIRE_GPU();
  const auto info = query_device();
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->gpu.empty());
  EXPECT_GT(info->sm_count, 0);
  EXPECT_GT(info->max_sm_clock_mhz, 0);
  EXPECT_GT(info->sm_clock_mhz, 0);
  EXPECT_GT(info->l2_bytes, 0u);
  EXPECT_GT(info->smem_optin_bytes, 0);
  EXPECT_GE(info->smem_per_sm_bytes, info->smem_optin_bytes);
  EXPECT_GT(info->global_mem_bytes, info->l2_bytes);
  EXPECT_GE(info->cc_major, 8);
  EXPECT_FALSE(info->driver.empty());
  EXPECT_FALSE(info->cuda_runtime.empty());
}

TEST(Bandwidth, IsPositiveAndPlausible) {
  MLALAB_REQUIRE_GPU();
  CudaStream stream;
  const Bandwidth bandwidth = measure_bandwidth(stream.get());
  EXPECT_GT(bandwidth.read_gbps, 0.0);
  EXPECT_LT(bandwidth.read_gbps, kImplausibleGbps);
  EXPECT_GT(bandwidth.copy_gbps, 0.0);
  EXPECT_LT(bandwidth.copy_gbps, kImplausibleGbps);
}

TEST(RunCudaBench, EveryCompiledVariantValidatesAndTimes) {
  MLALAB_REQUIRE_GPU();
  // Odd sizes on purpose: a partial page, a partial head block, a batch above the sample size.
  const BenchRequest request{.layout = Layout::kV3, .num_heads = 20, .batches = {1, 9},
                             .contexts = {1, 300}, .page_size = 16, .variants = {kAllVariants}};
  std::ostringstream progress;
  const BenchReport report = run_cuda_bench(request, &progress);
  ASSERT_TRUE(report.environment.read_gbps);
  EXPECT_GT(*report.environment.read_gbps, 0.0);
  ASSERT_FALSE(report.rows.empty()) << progress.str();
  for (const auto& row : report.rows) {
    EXPECT_EQ(row.status, RowStatus::kOk)
        << row.variant << " B=" << row.batch << " L=" << row.context << ": "
        << row.status_text();
    if (row.status != RowStatus::kOk) continue;
    EXPECT_GT(row.us, 0.0);
    EXPECT_GE(row.splits, 1);
    EXPECT_EQ(row.samples, kMinTimedRuns);
    ASSERT_TRUE(row.pct_read_bw);
    EXPECT_LT(row.gbps, kImplausibleGbps) << row.variant;
  }
}

}  // namespace
}  // namespace mlalab::bench
