#include "dispatch/feasibility.h"

#include <gtest/gtest.h>

#include "core/layout.h"

namespace mlalab::dispatch {
namespace {

constexpr int kV3Dqk = 576;
constexpr int kConsumerBlackwellOptin = 101376;  // 99 KiB: sm_120's per-CTA opt-in limit
constexpr int kH200Optin = 232448;               // 227 KiB: sm_90's per-CTA opt-in limit

// The shared-memory plan of traits.h, written out by hand for the cases below (bf16 = 2 B,
// fp32 = 4 B, rows of d_qk + 8 bf16, score rows of block_t + 8 floats per k-slice of warps,
// P rows of block_t + 8 bf16, 3 floats of row state per head, a balanced launch's 16-byte
// cursor over its parts):
//
//   h16_t32_w4_s2, V3: S = 1 m-tile × 4 n-tiles; the split reading the fewest fragment bytes
//   is 4 k-slices of 9 k-steps, one warp on all 4 n-tiles each (warps_k = 4).
//     q      16 × 584 × 2          = 18,688
//     KV     2 × 32 × 584 × 2      = 74,752
//     scores 4 × 16 × 40 × 4       = 10,240
//     P      16 × 40 × 2           =  1,280
//     state  3 × 16 × 4            =    192
//     cursor (int, int, long long)  =     16
//                                   105,168
//   h16_t32_w4_s3, V3: one more 32-row KV stage, + 37,376 = 142,544.
//   h16_t32_w4_s1, V3: one stage fewer, − 37,376 = 67,792.
//   h16_t32_w8_s2, V3: 2 n-tiles per warp, still 4 k-slices: the same 105,168.
//   h16_t16_w4_s2, V3: 1 m-tile × 2 n-tiles, 4 k-slices.
//     18,688 + 2 × 16 × 1,168 + 4 × 16 × 24 × 4 + 16 × 24 × 2 + 192 + 16 = 63,184.
constexpr int kH16T32W4S2V3 = 18688 + 74752 + 10240 + 1280 + 192 + 16;
constexpr int kH16T32W4S3V3 = kH16T32W4S2V3 + 32 * 584 * 2;
constexpr int kH16T32W4S1V3 = kH16T32W4S2V3 - 32 * 584 * 2;
constexpr int kH16T32W8S2V3 = kH16T32W4S2V3;
constexpr int kH16T16W4S2V3 = 18688 + 2 * 16 * 584 * 2 + 4 * 16 * 24 * 4 + 16 * 24 * 2 + 192 + 16;

VariantShape shape(int block_h, int block_t, int warps, int stages) {
  return VariantShape{.block_h = block_h, .block_t = block_t, .warps = warps, .stages = stages};
}

// A usage as measured on a GPU: no spills, 128 registers, 1 CTA per SM.
ResourceUsage measured(int smem_bytes, int threads = 128) {
  return ResourceUsage{.smem_bytes = smem_bytes, .static_smem_bytes = 0, .threads = threads,
                       .regs = 128, .spill_bytes = 0, .max_ctas_per_sm = 1,
                       .max_balanced_ctas_per_sm = 1, .balanced_spill_bytes = 0};
}

GpuLimits h200() { return GpuLimits{.smem_optin_bytes = kH200Optin, .smem_per_sm_bytes = 233472}; }

TEST(PlannedUsage, MatchesTheHandComputedPlan) {
  EXPECT_EQ(planned_usage(shape(16, 32, 4, 2), kV3Dqk).smem_bytes, 105168);
  EXPECT_EQ(planned_usage(shape(16, 32, 4, 2), kV3Dqk).smem_bytes, kH16T32W4S2V3);
  EXPECT_EQ(planned_usage(shape(16, 32, 4, 3), kV3Dqk).smem_bytes, kH16T32W4S3V3);
  EXPECT_EQ(planned_usage(shape(16, 32, 4, 1), kV3Dqk).smem_bytes, kH16T32W4S1V3);
  EXPECT_EQ(planned_usage(shape(16, 32, 8, 2), kV3Dqk).smem_bytes, kH16T32W8S2V3);
  EXPECT_EQ(planned_usage(shape(16, 16, 4, 2), kV3Dqk).smem_bytes, kH16T16W4S2V3);
}

TEST(PlannedUsage, KnowsNothingThatNeedsAGpu) {
  const auto usage = planned_usage(shape(16, 32, 4, 2), kV3Dqk);
  EXPECT_EQ(usage.threads, 128);
  EXPECT_EQ(usage.static_smem_bytes, 0);
  EXPECT_FALSE(usage.regs);
  EXPECT_FALSE(usage.spill_bytes);
  EXPECT_FALSE(usage.max_ctas_per_sm);
}

TEST(PlannedUsage, V4IsSmallerThanV3) {
  // V4 rows are 512 + 8 wide instead of 576 + 8: 64 fewer bf16 in each q and KV row.
  const auto v4 = planned_usage(shape(16, 32, 4, 2), dims_of(Layout::kV4).d_qk).smem_bytes;
  EXPECT_EQ(v4, kH16T32W4S2V3 - (16 + 2 * 32) * 64 * 2);
}

// The wgmma family's plan: q and KV tiles unpadded (128-byte-swizzled layout), P rows padded by 8,
// one float per head row and warpgroup and one of the maximum handed over, four 8-byte mbarriers
// per stage (a tile's first piece landed, the rest landed, each piece free), two 16-byte
// cursors (a balanced launch's MMA and copy warpgroups walk their parts apart), and a split
// pair's exchange (the other CTA's maximum and sum per head row, two 8-byte mbarriers).
//   wgmma_h64_t64_w8_s2, V3: 64 × 576 × 2 + 2 × 64 × 576 × 2 + 64 × 72 × 2 + 3 × 64 × 4 + 4 × 2 × 8
//                            + 2 × 16 + 64 × 8 + 2 × 8
//                          = 73,728 + 147,456 + 9,216 + 768 + 64 + 32 + 528 = 231,792: fits
//                          the H200's 232,448. Threads: 8 MMA warps and a copy warpgroup.
TEST(PlannedUsage, WgmmaFamilyPlanAndArchitecture) {
  const VariantShape wgmma_t64_s2{.family = KernelFamily::kWgmma,
                                  .block_h = 64, .block_t = 64, .warps = 8, .stages = 2};
  const auto usage = planned_usage(wgmma_t64_s2, kV3Dqk);
  EXPECT_EQ(usage.smem_bytes, 231792);
  EXPECT_EQ(usage.threads, 384);
  EXPECT_EQ(usage.required_compute_capability, 90);
  EXPECT_EQ(planned_usage(shape(16, 32, 4, 2), kV3Dqk).required_compute_capability, 0);

  ResourceUsage on_gpu = measured(usage.smem_bytes, 384);
  on_gpu.required_compute_capability = 90;
  GpuLimits limits = h200();
  limits.compute_capability = 90;
  EXPECT_TRUE(judge(on_gpu, limits, std::nullopt).feasible);
  limits.compute_capability = 120;
  limits.smem_optin_bytes = kConsumerBlackwellOptin;
  const auto verdict = judge(on_gpu, limits, std::nullopt);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason,
            "needs 231,792 B of shared memory, limit 101,376 B (the GPU's opt-in limit); "
            "needs sm_90a (wgmma), this GPU is sm_120");
}

// The swapped wgmma kernel's plan (16 heads, 64-token tiles, one MMA warpgroup): q of 16 rows,
// Pᵀ as one unpadded span (16 heads × 64 tokens), a float per MMA warp and head, barriers and
// cursors as above.
//   wgmma_h16_t64_w4_s2, V3: 16 × 576 × 2 + 2 × 64 × 576 × 2 + 16 × 64 × 2 + 4 × 16 × 4 + 4 × 2 × 8
//                            + 2 × 16
//                          = 18,432 + 147,456 + 2,048 + 256 + 64 + 32 = 168,288.
//   wgmma_h16_t64_w4_s3, V3: + 73,728 + 32 = 242,048: over the H200's 232,448, so three stages
//                            are pruned there; V4 (512-wide rows): 16,384 + 196,608 + 2,048 +
//                            256 + 96 + 32 = 215,424 fits. Threads: 4 MMA warps and a copy
//                            warpgroup.
TEST(PlannedUsage, WgmmaSwappedPlanThreeStagesFitV4Only) {
  const auto swapped = [](int stages) {
    return VariantShape{.family = KernelFamily::kWgmma,
                        .block_h = 16, .block_t = 64, .warps = 4, .stages = stages};
  };
  EXPECT_EQ(planned_usage(swapped(2), kV3Dqk).smem_bytes, 168288);
  EXPECT_EQ(planned_usage(swapped(2), kV3Dqk).threads, 256);
  const auto v3 = judge(planned_usage(swapped(3), kV3Dqk), std::nullopt, kH200Optin);
  EXPECT_FALSE(v3.feasible);
  EXPECT_EQ(v3.reason, "needs 242,048 B of shared memory, limit 232,448 B (requested limit)");
  const auto v4 = planned_usage(swapped(3), dims_of(Layout::kV4).d_qk);
  EXPECT_EQ(v4.smem_bytes, 215424);
  EXPECT_TRUE(judge(v4, std::nullopt, kH200Optin).feasible);
}

// The study's pruning: under consumer Blackwell's 99 KiB, 32-token tiles need more than the
// limit once they are pipelined (two or three stages); a single stage fits.
TEST(Judge, ThreeStagesOf32TokensExceedConsumerBlackwell) {
  const auto verdict = judge(planned_usage(shape(16, 32, 4, 3), kV3Dqk), std::nullopt,
                             kConsumerBlackwellOptin);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason,
            "needs 142,544 B of shared memory, limit 101,376 B (requested limit)");
}

TEST(Judge, TwoStagesOf32TokensExceedConsumerBlackwellOneFits) {
  for (const auto& candidate : {shape(16, 32, 4, 2), shape(16, 32, 8, 2)}) {
    const auto verdict =
        judge(planned_usage(candidate, kV3Dqk), std::nullopt, kConsumerBlackwellOptin);
    EXPECT_FALSE(verdict.feasible);
    EXPECT_EQ(verdict.reason,
              "needs 105,168 B of shared memory, limit 101,376 B (requested limit)");
  }
  const auto one_stage =
      judge(planned_usage(shape(16, 32, 4, 1), kV3Dqk), std::nullopt, kConsumerBlackwellOptin);
  EXPECT_TRUE(one_stage.feasible) << one_stage.reason;
  EXPECT_EQ(one_stage.reason, "");
}

TEST(Judge, LimitIsInclusive) {
  EXPECT_TRUE(judge(measured(kConsumerBlackwellOptin), std::nullopt, kConsumerBlackwellOptin)
                  .feasible);
  const auto over = judge(measured(kConsumerBlackwellOptin + 1), std::nullopt,
                          kConsumerBlackwellOptin);
  EXPECT_FALSE(over.feasible);
  EXPECT_EQ(over.reason, "needs 101,377 B of shared memory, limit 101,376 B (requested limit)");
}

TEST(Judge, StaticSharedMemoryCounts) {
  ResourceUsage usage = measured(kH16T16W4S2V3);  // 63,168 dynamic
  usage.static_smem_bytes = 40000;                // 103,168 in all
  const auto verdict = judge(usage, std::nullopt, kConsumerBlackwellOptin);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason,
            "needs 103,184 B of shared memory (63,184 dynamic + 40,000 static), "
            "limit 101,376 B (requested limit)");
}

TEST(Judge, TheStricterLimitApplies) {
  const auto usage = measured(kH16T32W4S3V3);
  EXPECT_TRUE(judge(usage, h200(), std::nullopt).feasible);
  EXPECT_FALSE(judge(usage, h200(), kConsumerBlackwellOptin).feasible);
  // An override above the GPU's limit does not lift it.
  const auto verdict = judge(measured(240000), h200(), 1 << 20);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason,
            "needs 240,000 B of shared memory, limit 232,448 B (the GPU's opt-in limit)");
}

TEST(Judge, SpillsAreInfeasible) {
  ResourceUsage usage = measured(kH16T16W4S2V3);
  usage.spill_bytes = 64;
  const auto verdict = judge(usage, h200(), std::nullopt);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason, "uses 64 B/thread of local memory (spills or a stack frame)");
}

// The balanced kernel (every variant's second build) is held to the spill and occupancy rules
// on its own: where it fails them the variant still runs split launches.
TEST(BalancedLaunchRefusal, ABalancedKernelThatSpillsRunsSplitLaunchesOnly) {
  ResourceUsage usage = measured(kH16T16W4S2V3);
  usage.balanced_spill_bytes = 0;
  EXPECT_FALSE(balanced_launch_refusal(usage));
  usage.balanced_spill_bytes = 52;
  EXPECT_EQ(balanced_launch_refusal(usage),
            "its balanced kernel uses 52 B/thread of local memory (spills or a stack frame)");
  EXPECT_TRUE(judge(usage, h200(), std::nullopt).feasible);  // the split kernel decides that

  usage.balanced_spill_bytes = 0;
  usage.max_balanced_ctas_per_sm = 0;
  EXPECT_EQ(balanced_launch_refusal(usage), "no CTA of its balanced kernel fits on an SM");

  // Without a GPU nothing is known, and nothing is refused.
  EXPECT_FALSE(balanced_launch_refusal(planned_usage(shape(16, 16, 4, 2), kV3Dqk)));
}

TEST(Judge, EveryFailingRuleIsNamed) {
  ResourceUsage usage = measured(kH16T32W4S3V3);
  usage.spill_bytes = 1024;
  const auto verdict = judge(usage, std::nullopt, kConsumerBlackwellOptin);
  EXPECT_EQ(verdict.reason,
            "needs 142,544 B of shared memory, limit 101,376 B (requested limit); "
            "uses 1,024 B/thread of local memory (spills or a stack frame)");
}

TEST(Judge, ZeroResidentCtasIsInfeasible) {
  ResourceUsage usage = measured(kH16T16W4S2V3);
  usage.max_ctas_per_sm = 0;
  const auto verdict = judge(usage, h200(), std::nullopt);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason, "0 CTAs fit per SM");
}

TEST(Judge, ZeroCtasIsNotRepeatedWhenSharedMemoryExplainsIt) {
  ResourceUsage usage = measured(240000);
  usage.max_ctas_per_sm = 0;
  const auto verdict = judge(usage, h200(), std::nullopt);
  EXPECT_EQ(verdict.reason,
            "needs 240,000 B of shared memory, limit 232,448 B (the GPU's opt-in limit)");
}

TEST(Judge, RegisterFileMustHoldOneCta) {
  // 256 threads × 255 registers = 65,280 fits the 65,536 of an SM; 512 threads do not.
  ResourceUsage usage = measured(kH16T16W4S2V3, 256);
  usage.regs = 255;
  EXPECT_TRUE(judge(usage, h200(), std::nullopt).feasible);
  usage.threads = 512;
  const auto verdict = judge(usage, h200(), std::nullopt);
  EXPECT_FALSE(verdict.feasible);
  EXPECT_EQ(verdict.reason, "0 CTAs fit per SM: 512 threads × 255 registers > 65,536 per SM");
}

TEST(Judge, WithoutGpuOrLimitNothingFailsButSharedMemoryIsUnchecked) {
  const auto verdict = judge(planned_usage(shape(16, 32, 4, 3), kV3Dqk), std::nullopt,
                             std::nullopt);
  EXPECT_TRUE(verdict.feasible);
  EXPECT_EQ(verdict.reason, "");
  EXPECT_TRUE(verdict.smem_unchecked());
  EXPECT_EQ(verdict.unchecked.size(), 4u);  // shared memory, spills, registers, occupancy
}

TEST(Judge, WithALimitOnlyTheGpuRulesAreUnchecked) {
  const auto verdict = judge(planned_usage(shape(16, 16, 4, 2), kV3Dqk), std::nullopt,
                             kConsumerBlackwellOptin);
  EXPECT_TRUE(verdict.feasible);
  EXPECT_FALSE(verdict.smem_unchecked());
  EXPECT_EQ(verdict.unchecked,
            (std::vector<std::string>{"spills (no GPU)", "registers (no GPU)",
                                      "occupancy (no GPU)"}));
}

TEST(Judge, MeasuredAndWithinLimitsIsFeasibleWithNothingUnchecked) {
  const auto verdict = judge(measured(kH16T16W4S2V3), h200(), std::nullopt);
  EXPECT_TRUE(verdict.feasible);
  EXPECT_EQ(verdict.reason, "");
  EXPECT_TRUE(verdict.unchecked.empty());
}

// Two-split launches of the 64-head wgmma kernel run as clusters of two CTAs; a GPU that holds
// none (a partition of one) gets the combine's partial rows instead (plan_launch).
TEST(PlacementSlots, SplitPairsFitUnlessNoClusterOfTwoIsResident) {
  Placement placement{.usage = measured(kH16T16W4S2V3)};
  EXPECT_TRUE(placement.slots(132).split_pairs_fit);  // not known (no GPU, or no such kernel)
  placement.usage.max_split_pair_clusters = 66;
  EXPECT_TRUE(placement.slots(132).split_pairs_fit);
  placement.usage.max_split_pair_clusters = 0;
  EXPECT_FALSE(placement.slots(132).split_pairs_fit);
}

// judge_here is what bench, the A/B lab and configs ask. Without a GPU it judges the plan: the
// same verdict as judge on planned_usage, for a compiled shape and for one this build lacks.
TEST(JudgeHere, WithoutAGpuJudgesThePlanAgainstTheOverride) {
  if (current_gpu_limits()) GTEST_SKIP() << "a GPU is present: judge_here measures on it";
  for (const VariantShape& judged : {shape(16, 16, 4, 2), shape(64, 64, 8, 4)}) {
    const Placement unlimited = judge_here(judged, kV3Dqk);
    EXPECT_FALSE(unlimited.measured);
    EXPECT_TRUE(unlimited.verdict.feasible);
    EXPECT_TRUE(unlimited.verdict.smem_unchecked());
    EXPECT_EQ(unlimited.ctas_per_sm(), 0);  // unknown without a GPU

    const Placement limited = judge_here(judged, kV3Dqk, kConsumerBlackwellOptin);
    const Feasibility expected =
        judge(planned_usage(judged, kV3Dqk), std::nullopt, kConsumerBlackwellOptin);
    EXPECT_EQ(limited.verdict.feasible, expected.feasible);
    EXPECT_EQ(limited.verdict.reason, expected.reason);
    EXPECT_EQ(limited.usage.smem_bytes, planned_usage(judged, kV3Dqk).smem_bytes);
  }
  // The 64 × 64 × 4-stage tile needs far more than 99 KiB at V3.
  const Placement big = judge_here(shape(64, 64, 8, 4), kV3Dqk, kConsumerBlackwellOptin);
  EXPECT_FALSE(big.verdict.feasible);
  EXPECT_NE(big.verdict.reason.find("(requested limit)"), std::string::npos) << big.verdict.reason;
}


}  // namespace
}  // namespace mlalab::dispatch
