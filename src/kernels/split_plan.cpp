#include "kernels/split_plan.h"

#include <algorithm>

#include "kernels/balanced_partition.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {
namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

int choose_num_splits(const SplitPolicy& policy, const SplitShape& shape,
                      const DeviceSlots& slots) {
  const long long base_ctas = static_cast<long long>(shape.batch) * shape.head_blocks;
  const int steps = std::max(1, ceil_div(shape.max_seq_len, shape.block_t));
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
                                                  steps / min_steps_per_split(shape.block_t)}));
  const double saturated_ctas = kHbmSaturation * static_cast<double>(slots_per_wave);
  const double wave_step_bytes = static_cast<double>(slots_per_wave) * shape.block_t *
                                 shape.d_qk * 2;
  const auto stretch = [&](long long wave_ctas) {
    return std::max(1.0, static_cast<double>(wave_ctas) / saturated_ctas);
  };
  const double one_wave_partial_weight =
      shape.family == KernelFamily::kWgmma ? kOneWavePartialRowsWeight : 0.0;
  int best_splits = 1;
  double best_cost = 0.0;
  for (int splits = 1; splits <= heuristic_cap; ++splits) {
    const long long ctas = base_ctas * splits;
    const double per_cta_steps = ceil_div(steps, splits) + kPrologueSteps;
    // One split writes the result itself: no partial rows.
    const double partial_steps =
        splits > 1 ? 2.0 * shape.batch * shape.num_heads * splits * shape.d_v * 4 / wave_step_bytes
                   : 0.0;
    double cost = per_cta_steps + one_wave_partial_weight * partial_steps;
    if (ctas > slots_per_wave) {
      const long long full_waves = ctas / slots_per_wave;
      const long long last_wave = ctas % slots_per_wave;
      cost = per_cta_steps * (static_cast<double>(full_waves) * stretch(slots_per_wave) +
                              (last_wave > 0 ? stretch(last_wave) : 0.0)) +
             partial_steps;
    }
    cost += static_cast<double>(kCombineSixteenthsPerSplit * splits) / 16;
    if (splits == 1 || cost < best_cost) {
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
  plan.num_splits = choose_num_splits(config.split,
                                      {.batch = params.batch,
                                       .num_heads = params.num_heads,
                                       .head_blocks = plan.head_blocks,
                                       .max_seq_len = max_seq_len,
                                       .block_t = config.shape.block_t,
                                       .d_qk = params.d_qk,
                                       .d_v = params.d_v,
                                       .family = config.shape.family},
                                      slots);
  plan.ctas = params.batch * plan.head_blocks * plan.num_splits;
  plan.split_pairs =
      plan.num_splits == 2 && wgmma::merges_split_pairs(config.shape) && slots.split_pairs_fit;
  plan.workspace_bytes =
      split_workspace_bytes(plan.partial_splits(), params.batch, params.num_heads, params.d_v);
  return plan;
}

}  // namespace mlalab::kernels
