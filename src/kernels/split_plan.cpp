#include "kernels/split_plan.h"

#include <algorithm>

#include "kernels/balanced_partition.h"

namespace mlalab::kernels {
namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

int choose_num_splits(const SplitPolicy& policy, int batch, int head_blocks, int max_seq_len,
                      int block_t, const DeviceSlots& slots) {
  const long long base_ctas = static_cast<long long>(batch) * head_blocks;
  const int steps = std::max(1, ceil_div(max_seq_len, block_t));
  const int cap = std::min(kMaxSplits, steps);
  switch (policy.kind) {
    case SplitPolicy::Kind::kFixed:
      return std::clamp(policy.value, 1, cap);
    case SplitPolicy::Kind::kTargetCtas:
      return std::clamp(ceil_div(policy.value, base_ctas), 1, cap);
    case SplitPolicy::Kind::kBalanced:
      return 1;
    case SplitPolicy::Kind::kHeuristic:
      break;
  }
  const long long slots_per_wave =
      std::max(1LL, static_cast<long long>(slots.sm_count) * slots.ctas_per_sm);
  const int heuristic_cap = std::max(1, std::min({kMaxHeuristicSplits, cap,
                                                  steps / min_steps_per_split(block_t)}));
  int best_splits = 1;
  long long best_cost = -1;
  for (int splits = 1; splits <= heuristic_cap; ++splits) {
    const long long waves = (base_ctas * splits + slots_per_wave - 1) / slots_per_wave;
    // In sixteenths of a step: the waves, and the combine's kCombineSixteenthsPerSplit.
    const long long cost = 16 * waves * (ceil_div(steps, splits) + kPrologueSteps) +
                           kCombineSixteenthsPerSplit * splits;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best_splits = splits;
    }
  }
  return best_splits;
}

// The partials are read as float4 by the combine.
constexpr std::size_t kPartialAlignment = 16;

std::size_t WorkspaceLayout::bytes(int d_v) const {
  return partial_out_offset + partial_rows * (static_cast<std::size_t>(d_v) + 1) * sizeof(float);
}

WorkspaceLayout workspace_layout(int num_splits, int workers, int batch, int num_heads) {
  WorkspaceLayout layout;
  if (workers > 0) {
    const std::size_t parts_bytes =
        static_cast<std::size_t>(batch) * sizeof(balanced::SequenceParts);
    layout.partial_out_offset =
        (parts_bytes + kPartialAlignment - 1) / kPartialAlignment * kPartialAlignment;
    layout.partial_rows =
        static_cast<std::size_t>(balanced::part_slots(workers, batch)) * num_heads;
  } else if (num_splits > 1) {
    layout.partial_rows = static_cast<std::size_t>(num_splits) * batch * num_heads;
  }
  return layout;
}

std::size_t split_workspace_bytes(int num_splits, int batch, int num_heads, int d_v) {
  return workspace_layout(num_splits, 0, batch, num_heads).bytes(d_v);
}

int choose_balanced_workers(const SplitPolicy& policy, int head_blocks, const DeviceSlots& slots) {
  if (policy.value > 0) return std::min(policy.value, kMaxBalancedWorkers);
  const int resident =
      slots.balanced_ctas_per_sm > 0 ? slots.balanced_ctas_per_sm : slots.ctas_per_sm;
  const long long one_wave = static_cast<long long>(slots.sm_count) * resident;
  return static_cast<int>(std::clamp<long long>(one_wave / head_blocks, 1, kMaxBalancedWorkers));
}

std::size_t balanced_workspace_bytes(int workers, int batch, int num_heads, int d_v) {
  return workspace_layout(1, workers, batch, num_heads).bytes(d_v);
}

LaunchPlan plan_launch(const DecodeParams& params, const KernelConfig& config, int max_seq_len,
                       const DeviceSlots& slots) {
  LaunchPlan plan;
  plan.head_blocks = ceil_div(params.num_heads, config.shape.block_h);
  if (config.split.kind == SplitPolicy::Kind::kBalanced) {
    plan.workers = choose_balanced_workers(config.split, plan.head_blocks, slots);
    plan.ctas = plan.head_blocks * plan.workers;
    plan.workspace_bytes =
        balanced_workspace_bytes(plan.workers, params.batch, params.num_heads, params.d_v);
    return plan;
  }
  plan.num_splits = choose_num_splits(config.split, params.batch, plan.head_blocks, max_seq_len,
                                      config.shape.block_t, slots);
  plan.ctas = params.batch * plan.head_blocks * plan.num_splits;
  plan.workspace_bytes =
      split_workspace_bytes(plan.num_splits, params.batch, params.num_heads, params.d_v);
  return plan;
}

}  // namespace mlalab::kernels
