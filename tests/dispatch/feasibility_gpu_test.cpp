// What judge_here measures on a GPU that the plan alone cannot know.
#include <gtest/gtest.h>

#include "bench/require_gpu.h"
#include "core/layout.h"
#include "dispatch/feasibility.h"
#include "kernels/registry.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

// A whole GPU holds clusters of two split CTAs of every compiled 64-head wgmma variant, so
// their two-split launches merge in pairs (LaunchPlan::split_pairs).
TEST(JudgeHereGpu, AWholeGpuHoldsSplitPairs) {
  MLALAB_REQUIRE_GPU();
  int judged = 0;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    if (!kernels::wgmma::merges_split_pairs(variant.shape)) continue;
    const Placement placement = judge_here(variant.shape, dims_of(Layout::kV3).d_qk);
    if (!placement.verdict.feasible) continue;  // e.g. not an sm_90a GPU
    ASSERT_TRUE(placement.usage.max_split_pair_clusters) << variant.name;
    EXPECT_GT(*placement.usage.max_split_pair_clusters, 0) << variant.name;
    EXPECT_TRUE(placement.slots(132).split_pairs_fit) << variant.name;
    ++judged;
  }
  if (judged == 0) GTEST_SKIP() << "no 64-head wgmma variant can run here (sm_90a, this build)";
}

}  // namespace
}  // namespace mlalab::dispatch
