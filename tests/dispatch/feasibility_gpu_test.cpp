// What judge_here measures on a GPU that the plan alone cannot know.
#include <gtest/gtest.h>

#include "bench/require_gpu.h"
#include "core/layout.h"
#include "dispatch/feasibility.h"
#include "kernels/registry.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

// A whole Hopper GPU holds the split clusters of every compiled variant whose split launches
// merge in clusters, as large as the variant merges (LaunchPlan::split_clusters): pairs of the
// 64-head kernel, a portable cluster's 8 CTAs of a _merge variant (one CTA per SM, a GPC of at
// least 8 SMs).
TEST(JudgeHereGpu, AWholeGpuHoldsEverySplitClusterItsVariantsMerge) {
  MLALAB_REQUIRE_GPU();
  int judged = 0;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    const int most = kernels::wgmma::max_cluster_splits(variant.shape);
    if (most < 2) continue;
    const Placement placement = judge_here(variant.shape, dims_of(Layout::kV3).d_qk);
    if (!placement.verdict.feasible) continue;  // e.g. not an sm_90a GPU
    ASSERT_TRUE(placement.usage.max_split_cluster) << variant.name;
    EXPECT_EQ(*placement.usage.max_split_cluster, most) << variant.name;
    EXPECT_EQ(placement.slots(132).max_split_cluster, most) << variant.name;
    ++judged;
  }
  if (judged == 0) GTEST_SKIP() << "no merging wgmma variant can run here (sm_90a, this build)";
}

}  // namespace
}  // namespace mlalab::dispatch
