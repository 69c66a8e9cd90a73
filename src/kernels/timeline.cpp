#include "kernels/timeline.h"

namespace mlalab::kernels {

std::size_t timeline_offset(const LaunchPlan& plan, int batch, int num_heads, int d_v) {
  constexpr std::size_t kAlignment = alignof(CtaTimeline) < 16 ? 16 : alignof(CtaTimeline);
  const std::size_t partials =
      workspace_layout(plan.partial_splits(), plan.workers, batch, num_heads).bytes(d_v);
  return (partials + kAlignment - 1) / kAlignment * kAlignment;
}

LaunchPlan with_timeline(LaunchPlan plan, int batch, int num_heads, int d_v) {
  plan.timeline = true;
  plan.workspace_bytes = timeline_offset(plan, batch, num_heads, d_v) +
                         static_cast<std::size_t>(plan.ctas) * sizeof(CtaTimeline);
  return plan;
}

}  // namespace mlalab::kernels
