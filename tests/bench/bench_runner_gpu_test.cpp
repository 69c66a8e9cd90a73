// The CUDA benchmark path end to end on a real GPU; skips with the reason without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bandwidth.h"
#include "bench/bench_runner.h"
#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "bench/require_gpu.h"
#include "kernels/registry.h"
#include "kernels/timeline.h"

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

// The ring's tile events of one wgmma CTA (kernels/timeline.h) come in the order the kernel
// forces: every step through the ring once; each tile issued after its stage's previous tile
// freed it, landed after its issue, freed after it landed. A tile recorded against the wrong
// ring index, or an event against the wrong tile, breaks one of them.
void expect_ring_in_order(const kernels::CtaTimeline& record, int stages, int steps,
                          const std::string& where) {
  EXPECT_EQ(record.ring_stages, stages) << where;
  EXPECT_EQ(record.ring_tiles, steps) << where;
  // Cycles from `from` to `to` on the CTA's SM (the low 32 bits of one clock).
  const auto after = [](std::uint32_t from, std::uint32_t to) {
    return static_cast<std::int32_t>(to - from);
  };
  for (int t = 0; t < std::min(record.ring_tiles, kernels::kTimelineTiles); ++t) {
    const kernels::TimelineTile& tile = record.tile[t];
    const std::string at = where + ", tile " + std::to_string(t);
    // A TMA tile's pieces go one after the other; a cp.async tile's together, after both frees.
    EXPECT_GE(after(tile.free_wait, tile.first_free), 0) << at;
    EXPECT_GE(after(tile.first_free, tile.first_issued), 0) << at;
    EXPECT_GE(after(tile.first_free, tile.rest_free), 0) << at;
    EXPECT_GE(after(tile.first_issued, tile.rest_issued), 0) << at;
    EXPECT_GE(after(tile.rest_free, tile.rest_issued), 0) << at;
    if (record.mma_events == 0) continue;
    EXPECT_GT(after(tile.first_issued, tile.first_landed), 0) << at;
    EXPECT_GE(after(tile.landed_wait, tile.first_landed), 0) << at;
    EXPECT_GE(after(tile.first_landed, tile.rest_landed), 0) << at;
    EXPECT_GT(after(tile.first_landed, tile.first_freed), 0) << at;
    EXPECT_GT(after(tile.rest_landed, tile.rest_freed), 0) << at;
    if (t >= stages) {
      EXPECT_GT(after(record.tile[t - stages].first_freed, tile.first_free), 0) << at;
      EXPECT_GT(after(record.tile[t - stages].rest_freed, tile.rest_free), 0) << at;
    }
  }
}

// A timeline build's records account for every step of the batch exactly once: for each
// (sequence, head block), the steps of the parts the CTAs recorded sum to the sequence's
// ⌈length / block_t⌉, computed here from the drawn lengths; each CTA's parts end in order,
// after it started; and a wgmma CTA's ring events are in order.
void expect_every_step_recorded_once(const kernels::Variant& variant, const SplitPolicy& split) {
  constexpr int kBatch = 9;
  constexpr int kContext = 700;
  const BenchRequest request{.layout = Layout::kV3, .num_heads = 20, .batches = {kBatch},
                             .contexts = {kContext}, .page_size = 16,
                             .variants = {variant.name}, .split = split,
                             .lengths = {.shortest_fraction = 0.05}, .timeline = true};
  const std::string launch = variant.name + ", " + split.to_string();
  std::ostringstream progress;
  const BenchReport report = run_cuda_bench(request, &progress);
  ASSERT_EQ(report.rows.size(), 1u) << progress.str();
  const BenchRow& row = report.rows[0];
  ASSERT_EQ(row.status, RowStatus::kOk) << launch << ": " << row.status_text();
  const int block_t = variant.shape.block_t;
  const int head_blocks = (request.num_heads + variant.shape.block_h - 1) / variant.shape.block_h;
  const int ctas = head_blocks * (row.workers > 0 ? row.workers : kBatch * row.splits);
  ASSERT_EQ(static_cast<int>(row.timeline.size()), ctas) << launch;

  std::map<std::pair<int, int>, int> steps;  // (sequence, head block) → recorded steps
  for (int cta = 0; cta < ctas; ++cta) {
    const kernels::CtaTimeline& record = row.timeline[cta];
    ASSERT_LE(record.parts, kernels::kTimelineParts) << launch << ": CTA " << cta;
    if (row.workers == 0) {
      EXPECT_EQ(record.parts, 1) << launch << ": CTA " << cta;
    }
    std::uint64_t previous_ns = record.start_ns;
    int cta_steps = 0;
    for (int part = 0; part < record.parts; ++part) {
      const kernels::TimelinePart& done = record.part[part];
      ASSERT_GE(done.sequence, 0) << launch;
      ASSERT_LT(done.sequence, kBatch) << launch;
      EXPECT_GE(done.end_ns, previous_ns) << launch << ": CTA " << cta << " part " << part;
      previous_ns = done.end_ns;
      steps[{done.sequence, cta % head_blocks}] += done.steps;
      cta_steps += done.steps;
    }
    if (variant.shape.family == KernelFamily::kWgmma) {
      expect_ring_in_order(record, variant.shape.stages, cta_steps, launch + ": CTA " +
                                                                        std::to_string(cta));
    }
  }
  const std::vector<int> lengths = drawn_lengths(request.lengths, kBatch, kContext, request.seed);
  for (int sequence = 0; sequence < kBatch; ++sequence) {
    for (int head_block = 0; head_block < head_blocks; ++head_block) {
      EXPECT_EQ((steps[{sequence, head_block}]), (lengths[sequence] + block_t - 1) / block_t)
          << launch << ": sequence " << sequence << " (" << lengths[sequence]
          << " tokens), head block " << head_block;
    }
  }
}

// The first compiled variant of each family (they record their parts apart), in a balanced
// launch (CTAs of many parts) and a split one (a part each).
TEST(RunCudaBench, ATimelineRecordsEveryStepOnce) {
  if (!kernels::kTimelineBuild) {
    GTEST_SKIP() << "built without MLALAB_TIMELINE: no timelines to check (kernels/timeline.h)";
  }
  MLALAB_REQUIRE_GPU();
  std::map<KernelFamily, const kernels::Variant*> first_of_family;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    first_of_family.try_emplace(variant.shape.family, &variant);
  }
  for (const auto& [family, variant] : first_of_family) {
    expect_every_step_recorded_once(*variant, *parse_split_policy("balanced:7"));
    expect_every_step_recorded_once(*variant, SplitPolicy{});
  }
}

}  // namespace
}  // namespace mlalab::bench
