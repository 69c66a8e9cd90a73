#include "kernels/timeline.h"

#include <gtest/gtest.h>

namespace mlalab::kernels {
namespace {

constexpr int kBatch = 5;
constexpr int kHeads = 5;  // odd: the partial results' bytes are then no multiple of 16
constexpr int kDv = 512;

// The records go after the partial results, 16-byte aligned, one per CTA; the rest of the
// plan is as it was.
TEST(WithTimeline, PutsOneRecordPerCtaAfterThePartialResults) {
  const LaunchPlan one_split{.head_blocks = 2, .num_splits = 1, .ctas = kBatch * 2};
  const LaunchPlan split{.head_blocks = 2, .num_splits = 3, .ctas = kBatch * 2 * 3,
                         .workspace_bytes = split_workspace_bytes(3, kBatch, kHeads, kDv)};
  const LaunchPlan balanced{.head_blocks = 2, .workers = 7, .ctas = 2 * 7,
                            .workspace_bytes = balanced_workspace_bytes(7, kBatch, kHeads, kDv)};
  for (const LaunchPlan& plan : {one_split, split, balanced}) {
    const LaunchPlan recorded = with_timeline(plan, kBatch, kHeads, kDv);
    const std::size_t offset = timeline_offset(recorded, kBatch, kHeads, kDv);
    EXPECT_TRUE(recorded.timeline);
    EXPECT_GE(offset, plan.workspace_bytes);
    EXPECT_LT(offset, plan.workspace_bytes + 16);
    EXPECT_EQ(offset % 16, 0u);
    EXPECT_EQ(recorded.workspace_bytes, offset + plan.ctas * sizeof(CtaTimeline));
    EXPECT_EQ(recorded.ctas, plan.ctas);
    EXPECT_EQ(recorded.num_splits, plan.num_splits);
    EXPECT_EQ(recorded.workers, plan.workers);
  }
  EXPECT_EQ(timeline_offset(with_timeline(one_split, kBatch, kHeads, kDv), kBatch, kHeads, kDv),
            0u);
  EXPECT_GT(timeline_offset(with_timeline(split, kBatch, kHeads, kDv), kBatch, kHeads, kDv),
            split.workspace_bytes);  // the round-up is exercised
}

}  // namespace
}  // namespace mlalab::kernels
