#include "kernels/split_plan.h"

#include <gtest/gtest.h>

namespace mlalab::kernels {
namespace {

constexpr SplitPolicy fixed(int splits) {
  return {.kind = SplitPolicy::Kind::kFixed, .value = splits};
}
constexpr SplitPolicy target_ctas(int ctas) {
  return {.kind = SplitPolicy::Kind::kTargetCtas, .value = ctas};
}
constexpr SplitPolicy kHeuristic{};

constexpr DeviceSlots kH200{.sm_count = 132, .ctas_per_sm = 2};
constexpr int kLong = 1 << 16;  // long enough that the token cap never binds

TEST(ChooseNumSplits, TargetCtasIsTheSmallestCountReachingTheTarget) {
  struct Case {
    int batch;
    int head_blocks;
    int target;
  };
  for (const auto [batch, head_blocks, target] :
       {Case{3, 2, 512}, Case{1, 1, 7}, Case{64, 8, 512}, Case{97, 1, 1000}, Case{5, 3, 15}}) {
    const int splits = choose_num_splits(target_ctas(target), batch, head_blocks, kLong, 16, kH200);
    SCOPED_TRACE(testing::Message() << batch << "x" << head_blocks << " target " << target);
    EXPECT_GE(batch * head_blocks * splits, target);
    if (splits > 1) {
      EXPECT_LT(batch * head_blocks * (splits - 1), target);
    }
  }
  EXPECT_EQ(choose_num_splits(target_ctas(512), 3, 2, kLong, 16, kH200), 86);
  EXPECT_EQ(choose_num_splits(target_ctas(512), 64, 8, kLong, 16, kH200), 1);
}

TEST(ChooseNumSplits, FixedIsTakenAsGiven) {
  for (const int splits : {1, 2, 7, 64, kMaxSplits}) {
    EXPECT_EQ(choose_num_splits(fixed(splits), 4, 2, kLong, 16, kH200), splits);
  }
}

TEST(ChooseNumSplits, CappedAtOneStepOfTokensPerSplit) {
  // 100 tokens in steps of 16 are 7 steps: no more than 7 splits, whatever is asked.
  EXPECT_EQ(choose_num_splits(fixed(64), 1, 1, 100, 16, kH200), 7);
  EXPECT_EQ(choose_num_splits(target_ctas(512), 1, 1, 100, 16, kH200), 7);
  EXPECT_EQ(choose_num_splits(fixed(64), 1, 1, 100, 64, kH200), 2);
  EXPECT_EQ(choose_num_splits(fixed(5), 1, 1, 65, 64, kH200), 2);
  // And at kMaxSplits.
  EXPECT_EQ(choose_num_splits(target_ctas(1 << 20), 1, 1, kLong, 16, kH200), kMaxSplits);
}

TEST(ChooseNumSplits, HeuristicFillsWholeWavesOfResidentCtas) {
  // One wave is 132 · 2 = 264 CTAs; 65536 tokens are 1024 steps of 64.
  // One sequence: every split count up to the caps fits in one wave, so the most splits win.
  EXPECT_EQ(choose_num_splits(kHeuristic, 1, 1, kLong, 64, kH200), kMaxHeuristicSplits);
  // 8 base CTAs: 33 splits still fit one wave, but 1024 steps take 32 steps per split at 32
  // splits as at 33; the tie goes to fewer splits.
  EXPECT_EQ(choose_num_splits(kHeuristic, 4, 2, kLong, 64, kH200), 32);
  // 512 base CTAs are already two waves; splitting only adds partial waves and prologues.
  EXPECT_EQ(choose_num_splits(kHeuristic, 64, 8, kLong, 64, kH200), 1);
  // 264 CTAs of 16 steps fill exactly one wave (16 + 2 steps); 2 splits take 2 waves of 8 + 2.
  EXPECT_EQ(choose_num_splits(kHeuristic, 264, 1, 1024, 64, kH200), 1);
  // 200 CTAs of 64 steps: 5 splits make 4 waves of 13 + 2 steps, 60 < 64 + 2 for one split.
  EXPECT_EQ(choose_num_splits(kHeuristic, 200, 1, 4096, 64, kH200), 5);
}

TEST(ChooseNumSplits, HeuristicKeepsMinTilesPerSplit) {
  // 1024 tokens are 16 steps of 64: at kMinTilesPerSplit steps each, 4 splits at most.
  EXPECT_EQ(choose_num_splits(kHeuristic, 1, 1, 1024, 64, kH200), 16 / kMinTilesPerSplit);
  EXPECT_EQ(choose_num_splits(kHeuristic, 1, 1, 1024, 16, kH200), 64 / kMinTilesPerSplit);
  // Fewer than kMinTilesPerSplit steps in all: one split.
  EXPECT_EQ(choose_num_splits(kHeuristic, 1, 1, 3 * 64, 64, kH200), 1);
}

TEST(ChooseNumSplits, AlwaysAtLeastOne) {
  for (const SplitPolicy policy :
       {fixed(1), fixed(8), target_ctas(1), target_ctas(512), kHeuristic}) {
    for (const int max_seq_len : {0, 1, 15, 4097}) {
      EXPECT_GE(choose_num_splits(policy, 97, 8, max_seq_len, 64, kH200), 1);
      EXPECT_GE(choose_num_splits(policy, 1, 1, max_seq_len, 64, DeviceSlots{}), 1);
    }
  }
  EXPECT_EQ(choose_num_splits(fixed(8), 1, 1, 0, 16, kH200), 1);
}

TEST(SplitWorkspace, HoldsPartialOutAndLsePerSplit) {
  EXPECT_EQ(split_workspace_bytes(1, 64, 128, 512), 0u);
  EXPECT_EQ(split_workspace_bytes(4, 2, 16, 512), 4u * 2 * 16 * (512 + 1) * sizeof(float));
}

TEST(PlanLaunch, CombinesHeadBlocksSplitsAndWorkspace) {
  DecodeParams params{.batch = 3, .num_heads = 17, .d_qk = 576, .d_v = 512};
  const KernelConfig config{.shape = {.block_h = 16, .block_t = 16, .warps = 4, .stages = 2},
                            .split = fixed(7)};
  const LaunchPlan plan = plan_launch(params, config, 1000, kH200);
  EXPECT_EQ(plan.head_blocks, 2);
  EXPECT_EQ(plan.num_splits, 7);
  EXPECT_EQ(plan.ctas, 3 * 2 * 7);
  EXPECT_EQ(plan.workspace_bytes, split_workspace_bytes(7, 3, 17, 512));

  const LaunchPlan unsplit =
      plan_launch(params, {.shape = config.shape, .split = fixed(1)}, 1000, kH200);
  EXPECT_EQ(unsplit.num_splits, 1);
  EXPECT_EQ(unsplit.workspace_bytes, 0u);
}

}  // namespace
}  // namespace mlalab::kernels
