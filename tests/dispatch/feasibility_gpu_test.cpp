// What judge_here measures on a GPU that the plan alone cannot know.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/require_gpu.h"
#include "core/layout.h"
#include "dispatch/feasibility.h"
#include "kernels/device.h"
#include "kernels/registry.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

// A whole Hopper GPU holds the split clusters of every compiled variant whose split launches
// merge in clusters, at every portable size the variant merges (LaunchPlan::split_clusters):
// pairs of the 64-head kernel, 2-8 CTAs of a _merge variant (one CTA per SM, GPCs of more
// than 8 SMs), never more CTAs than its SMs hold; clusters of 9-16 as a GPC's SMs allow. The
// counts are printed: the plan merges only where its clusters take no more waves than its CTAs.
TEST(JudgeHereGpu, AWholeGpuHoldsEverySplitClusterItsVariantsMerge) {
  MLALAB_REQUIRE_GPU();
  int judged = 0;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    const int most = kernels::wgmma::max_cluster_splits(variant.shape);
    if (most < 2) continue;
    const Placement placement = judge_here(variant.shape, dims_of(Layout::kV3).d_qk);
    if (!placement.verdict.feasible) continue;  // e.g. not an sm_90a GPU
    const std::vector<int>& resident = placement.usage.resident_split_clusters;
    ASSERT_EQ(resident.size(), static_cast<std::size_t>(most + 1)) << variant.name;
    const int sm_count = kernels::current_device().sm_count;
    std::string counts;
    for (int ctas = 2; ctas <= most; ++ctas) {
      if (ctas <= kernels::kMaxPortableClusterCtas) {
        EXPECT_GE(resident[ctas], 1) << variant.name << ", clusters of " << ctas;
      }
      counts += " " + std::to_string(ctas) + ":" + std::to_string(resident[ctas]);
      EXPECT_LE(resident[ctas] * ctas, sm_count * placement.ctas_per_sm())
          << variant.name << ", clusters of " << ctas;
      EXPECT_EQ(placement.slots(sm_count).resident_split_clusters[ctas], resident[ctas]);
    }
    std::printf("%s on %d SMs at %d CTAs/SM, resident clusters (size:count):%s\n",
                variant.name.c_str(), sm_count, placement.ctas_per_sm(), counts.c_str());
    ++judged;
  }
  if (judged == 0) GTEST_SKIP() << "no merging wgmma variant can run here (sm_90a, this build)";
}

}  // namespace
}  // namespace mlalab::dispatch
