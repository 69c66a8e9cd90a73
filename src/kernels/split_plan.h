#pragma once
// Host-side planning of a launch, separate from the launch itself (plan, then run): how many
// splits each sequence's KV range is cut into, and how much workspace the partial results
// need. Pure functions, tested without a GPU.
#include <algorithm>
#include <cstddef>

#include "core/decode_params.h"
#include "core/kernel_config.h"

namespace mlalab::kernels {

// What the plan needs to know about the device. ctas_per_sm is the variant's occupancy
// (1 when unknown, e.g. on the CPU); balanced_ctas_per_sm that of its balanced kernel, which
// may hold more registers (0: the same).
struct DeviceSlots {
  int sm_count = 1;
  int ctas_per_sm = 1;
  int balanced_ctas_per_sm = 0;
  // Whether the GPU can hold a cluster of two of the variant's CTAs (LaunchPlan::split_pairs):
  // a whole GPU can, a partition of it (MIG, a green context) may not.
  bool split_pairs_fit = true;
};

struct LaunchPlan {
  int head_blocks = 0;   // ceil(num_heads / block_h)
  int num_splits = 1;    // KV splits per (batch, head block); 1 writes out/lse directly
  int workers = 0;       // balanced launches: CTAs per head block sharing the batch's tokens
                         // (num_splits is then 1); 0 for per-sequence splits
  int ctas = 0;          // batch · head_blocks · num_splits, or head_blocks · workers
  std::size_t workspace_bytes = 0;  // partial out + lse when num_splits > 1 or balanced, else 0
                                    // (and the timeline after them, when asked for)
  bool timeline = false;  // record a per-CTA timeline (kernels/timeline.h: with_timeline)
  // Two splits whose CTAs are launched as clusters of two and merge their halves of each
  // sequence in shared memory (the wgmma 64-head kernel, decode.cuh): no partial rows, no
  // combine.
  bool split_pairs = false;

  bool balanced() const { return workers > 0; }
  // The splits whose partial rows the workspace holds: 1 (none) where pairs merge in a cluster.
  int partial_splits() const { return split_pairs ? 1 : num_splits; }
};

// The problem as the split policies see it: its size, and the variant's head blocks and tile.
struct SplitShape {
  int batch = 1;
  int num_heads = 1;
  int head_blocks = 1;  // ceil(num_heads / block_h)
  int max_seq_len = 0;
  int block_t = 16;
  int d_qk = 576;
  int d_v = 512;
  KernelFamily family = KernelFamily::kPortable;  // whose one-wave launches pay partial rows
};

// Splits for a policy:
//   fixed:N         N
//   target_ctas:T   the smallest s with batch · head_blocks · s ≥ T
//   heuristic       the s that minimises a model of the kernel's time, in steps of one CTA.
//                   A launch that fits in one wave of resident CTAs (sm_count · ctas_per_sm
//                   slots) costs steps per split + kPrologueSteps. One of several waves costs
//                     Σ over its waves of (steps per split + kPrologueSteps) · stretch(wave)
//                     + partial_bytes(s) / wave_step_bytes,
//                   - stretch(wave) = max(1, CTAs / (kHbmSaturation · slots)): a wave of fewer
//                     CTAs takes each step sooner, as HBM saturates before every slot streams
//                     (at 16 heads, 4,096 tokens, one CTA per SM: 1.0 µs per step at batch 96,
//                     1.16 at batch 128, docs/perf-notes.md, version 31);
//                   - partial_bytes(s) = 2 · batch · heads · s · d_v · 4 for s > 1: the fp32
//                     partial rows the splits write and the combine reads, over wave_step_bytes
//                     = slots · block_t · d_qk · 2, the KV a full wave reads per step.
//                   The stretch only where the launch takes several waves: within one wave
//                   more CTAs are more memory parallelism, and trimming splits there by it
//                   measured from −8 % to +3 % (version 33). A wgmma launch in one wave
//                   pays its partial rows at kOneWavePartialRowsWeight. Every s also pays s / 16
//                   steps, the combine's share per split (kCombineSixteenthsPerSplit). So it
//                   fills waves while the shorter splits save more than the per-CTA prologue
//                   (loading q, writing the partial result), the partial rows and the combine
//                   cost, and splits into several waves only where HBM-bound waves still
//                   gain. Its splits are kept to ≥ min_steps_per_split(block_t) steps of
//                   tokens and ≤ kMaxHeuristicSplits. Ties go to fewer splits.
// Every policy is then capped at kMaxSplits and at the number of block_t steps of the
// longest sequence, so every split has at least one step of tokens. Always ≥ 1. (The balanced
// policy does not split per sequence: 1.)
int choose_num_splits(const SplitPolicy& policy, const SplitShape& shape,
                      const DeviceSlots& slots);

// A heuristic split's least work: kMinTilesPerSplit steps, or kMinTokensPerSplit tokens where
// that is fewer steps. The combine's cost is per split whatever the tile, so the floor is one
// of tokens once steps are large: 64-token tiles get one step, 32-token tiles two. At 128
// tokens (version 30) batch 1-8 of 1,024 tokens, 16 heads, got 8 splits where one step each
// (16) was 6-18 % faster, as at 128 heads (10 %) (docs/results/2026-12-03-h200-v35/sweep/).
constexpr int kMinTilesPerSplit = 4;
constexpr int kMinTokensPerSplit = 64;
constexpr int min_steps_per_split(int block_t) {
  return std::min(kMinTilesPerSplit, (kMinTokensPerSplit + block_t - 1) / block_t);
}
constexpr int kMaxHeuristicSplits = 128;
// The combine's cost per split, in sixteenths of one step of the decode kernel. Fitted at
// batch 1 and 16 heads, where only the combine grows with the splits (time ≈ a · steps per
// split + b · splits + c over 32, 64 and 128 splits at 8,192 and 16,384 tokens,
// docs/results/2026-12-02-h200-v30/splits/): b / a = 0.044 (h16_t16_w4_s2), 0.064
// (wgmma_h16_t64_w4_s2), 0.098 (wgmma_h64_t32_w8_s4) steps per split. Without it the
// wave model split batch 1 of 16,384 tokens 128 ways, where the swapped kernel took 18.4 µs
// and the seesaw 22.5, against 15.5 and 17.8 at 64 splits.
constexpr int kCombineSixteenthsPerSplit = 1;
// The weight of the partial rows in a wgmma launch of one wave, whose steps are latency-bound
// rather than HBM-bound. Fitted on a fixed-split sweep of both wgmma kernels (16 and 128 heads,
// batch 1-8, 1,024-16,384 tokens, docs/results/2026-12-03-h200-v35/sweep/) with the tuning
// tables' rankings: the pick's time over the best measured, geometric mean 2.5 % before
// (128-token floor, no such term), 1.1 % with the 64-token floor alone, 0.9 % with both.
// Without it the 64-token floor split 128 heads, 4,096 tokens 43 ways, 13 % slower than 32;
// at 0.4 the labs found 128 heads, batch 4 of 1,024 tokens 7.9 % slower (11 splits, not 8).
// The portable kernel's picks keep the old model: where the term moved them (16 heads, batch
// 2-4, 4,096-16,384 tokens) it lost 3-5 %.
constexpr double kOneWavePartialRowsWeight = 0.75;
// The share of a wave's slots whose CTAs already saturate HBM (the heuristic's stretch). With
// it and the partial rows, the model picks the fastest of 1, 2, 4 and 8 splits (or the count
// the heuristic picks) at every key of version 31's split grid (three variants, 16 and 128
// heads, batch 16-128, 1,024-4,096 tokens); without, it missed by 11-28 % at batch 96, e.g. the
// seesaw at 16 heads, 1,024 tokens, 4 splits 50.4 µs against 39.2 at one.
constexpr double kHbmSaturation = 0.8;
// The fixed cost of a CTA's part (loading block_h rows of q, the epilogue), in KV steps; q rows
// are as wide as KV rows and block_h is about block_t, so about one step each. Balanced
// launches charge it for every sequence a worker starts (balanced_partition.h's start_cost).
constexpr int kPrologueSteps = 2;

// Where a launch's workspace keeps what: a balanced launch's SequenceParts, one per batch entry,
// at offset 0; then, from partial_out_offset (16-byte aligned), fp32 partial out
// [partial_rows, d_v] followed by fp32 partial lse [partial_rows]. The rows are
// num_splits · batch · heads for a split launch of more than one split ([split, batch, head]),
// part_slots(workers, batch) · heads for a balanced one (kernels/balanced_partition.h), and
// none for one split. The plan sizes the workspace and the launch carves it from this alone.
struct WorkspaceLayout {
  std::size_t partial_out_offset = 0;  // bytes
  std::size_t partial_rows = 0;

  std::size_t bytes(int d_v) const;
};
WorkspaceLayout workspace_layout(int num_splits, int workers, int batch, int num_heads);

// Bytes of a split launch's workspace (workspace_layout without workers).
std::size_t split_workspace_bytes(int num_splits, int batch, int num_heads, int d_v);

// Workers per head block of a balanced launch: the policy's value, or by default one wave of
// resident CTAs shared by the head blocks, ⌊sm_count · ctas_per_sm / head_blocks⌋ (≥ 1), at
// most kMaxBalancedWorkers. Independent of the lengths, so a graph's grid fits any of them.
int choose_balanced_workers(const SplitPolicy& policy, int head_blocks, const DeviceSlots& slots);

// Bytes of a balanced launch's workspace (workspace_layout of its workers).
std::size_t balanced_workspace_bytes(int workers, int batch, int num_heads, int d_v);

LaunchPlan plan_launch(const DecodeParams& params, const KernelConfig& config, int max_seq_len,
                       const DeviceSlots& slots);

}  // namespace mlalab::kernels
