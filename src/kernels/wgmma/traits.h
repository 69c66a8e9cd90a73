#pragma once
// The wgmma family's shape rules and shared-memory plan. Plain constexpr host code, so the
// feasibility pruning and `mlalab configs` compute the same plan as the kernel without a GPU.
//
// Two kernels. decode.cuh is built for H = 128 (compute-bound): 64 heads per CTA (the M of one
// warpgroup MMA) and two warpgroups that take turns at S = Q·Kᵀ and the softmax of a tile (the
// seesaw: one's softmax runs under the other's MMAs; at block_t 64, where only two stages fit,
// in pairs of tiles, docs/perf-notes.md version 42) and split O = P·V by d_v columns, so each
// thread keeps 128 fp32 accumulators of O; the constants below up to the swapped kernel's are
// its own (swapped.cuh takes its counts from SwappedTraits only: a bar.sync counted with these
// would hang it). swapped.cuh, for up to 16 heads, is described with its constants below. In
// both a further warpgroup only copies: partial tiles by cp.async, whose issue stalls for as
// long as the memory system is busy (warps of their own keep those stalls off the tensor cores'
// critical path), and q and every whole KV tile with one TMA copy each, which one thread issues
// (tensor_maps.h; where the driver cannot encode a map, those copies fall back to cp.async).
#include "core/kernel_config.h"
#include "core/layout.h"
#include "kernels/balanced_partition.h"
#include "kernels/split_plan.h"

namespace mlalab::kernels::wgmma {

// sm_90a code runs on compute capability 9.0 only (not on later architectures).
constexpr int kComputeCapability = 90;
constexpr int kBlockH = 64;          // the M of wgmma.m64nNk16
constexpr int kWarpGroups = 2;
constexpr int kWarps = 4 * kWarpGroups;      // the MMA warps; the variant name counts these
constexpr int kMmaThreads = 32 * kWarps;
// The copy warps form a third warpgroup: registers are handed out per warpgroup, and only a
// whole warpgroup can give its share to the others (setmaxnreg).
constexpr int kCopyThreads = 128;
constexpr int kThreads = kMmaThreads + kCopyThreads;
constexpr int kCopyRegisters = 40;   // per copy thread after setmaxnreg
constexpr int kMmaRegisters = 232;   // per MMA thread
// setmaxnreg moves registers only within what the launch gave the CTA: its threads times the
// count __launch_bounds__(kThreads, 1) allows, 65,536 / kThreads rounded down to a multiple of
// 8 (168: 64,512 in all, not the SM's 65,536). A split past it makes the MMA warps'
// setmaxnreg.inc wait forever (docs/perf-notes.md, version 41: 240 / 32 hung every launch).
constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
static_assert(kMmaThreads * kMmaRegisters + kCopyThreads * kCopyRegisters <=
                  kThreads * kLaunchRegisters,
              "the setmaxnreg split exceeds the registers the launch allocates");
constexpr int kChunkBytes = 16;      // one cp.async, one swizzle unit
constexpr int kChunkElems = 8;       // bf16 per chunk
constexpr int kCoreRows = 8;         // rows of a swizzle atom (and of an MMA fragment row group)
// P rows are read by ldmatrix; 8 extra bf16 make their 8-row reads conflict-free.
constexpr int kProbPadElems = 8;
// A split CTA's final rows are staged in shared memory (decode.cuh) this far past a whole row:
// the 8 rows of one warp store then start 4 banks apart and meet no bank twice.
constexpr int kStagedRowPadBytes = 16;

// Tiles of q and KV rows are stored in wgmma's 128-byte-swizzled layout: a row's d_qk
// columns in spans of 64 (128 bytes); span s of every row of the tile together, rows 128 bytes
// apart; and in each 1,024-byte atom of 8 rows, the 16-byte unit u of row r stored at unit
// u ^ (r % 8). So row r, 16-byte chunk c (columns 8c..8c+7) of a tile of `rows` rows lives at
//   (c / 8) · rows · 128 + r · 128 + ((c % 8) ^ (r % 8)) · 16.
// The same bytes are the K-major K of S = Q·Kᵀ (8-row atoms 1,024 bytes apart) and the
// MN-major V of P·V (64 columns per span, 8 tokens per atom). The no-swizzle core-matrix
// layout it replaced cost the family 30-40 % of its time at H = 128 (docs/perf-notes.md,
// version 11). Every tile and atom must start on a 1,024-byte boundary (the descriptors' base
// offset is 0): the sizes below are multiples of it, and the kernels declare no static
// shared memory, which would move the dynamic region's start.
constexpr int kSpanElems = 64;    // columns of a 128-byte span
constexpr int kSpanBytes = 128;
constexpr int kAtomBytes = 1024;  // 8 rows of a span: the swizzle's period
constexpr int span_stride_bytes(int rows) { return rows * kSpanBytes; }

// The k-steps of S (16 columns of d_qk each, a quarter of a span): 32 in V4 (d_qk 512), 36 in
// V3 (576); the family supports exactly these.
constexpr int kKStepBytes = 16 * 2;
constexpr int kKStepsPerSpan = kSpanElems / 16;
constexpr int kCommonKSteps = dims_of(Layout::kV4).d_qk / 16;
constexpr int kMaxKSteps = dims_of(Layout::kV3).d_qk / 16;
static_assert(kCommonKSteps <= kMaxKSteps);

// A KV tile lands in two pieces, each on a barrier of its own, and is freed in the same two
// pieces: the first is group 0's d_v columns (kFirstPieceSpans spans), the rest group 1's and
// V3's rope span. Group 0 frees the first once its P·V of the tile is done, group 1 the rest
// (each after the owner's S has read the whole tile: its P reached them), so the copy of the
// next tile into the stage starts in the piece that is free first, and S starts on the
// piece that lands first (docs/perf-notes.md, versions 43 and 44). A piece goes as TMA boxes
// of kFirstPieceSpans spans and, past the last of those, boxes of one span (V3's rope): three
// boxes a tile in V3, two in V4. (Boxes of one span throughout, nine a tile in V3, made the
// 32-token seesaw 7-10 % slower.)
constexpr int kFirstPieceSpans = kDv / kWarpGroups / kSpanElems;
constexpr int kv_single_spans(int spans) { return spans % kFirstPieceSpans; }
static_assert(kv_single_spans(dims_of(Layout::kV3).d_qk / kSpanElems) == 1 &&
              kv_single_spans(dims_of(Layout::kV4).d_qk / kSpanElems) == 0);

// How far (base 2) a tile's maximum may pass the running one before the running one moves
// (both kernels): O, rescaled whenever it moves, rarely is, and P stays at most 2^8.
constexpr float kMaxGrowthLog2 = 8.0f;

// What starting a part costs a balanced worker of the kernel above at block_t 32, in its steps
// (balanced_partition.h's start_cost): q's 72 KB loaded once the part before has drained, the
// first tiles, the part's result rows, ~6 µs: ~6 of its 32-token steps (a sweep of 1-8 on
// mixed lengths, docs/perf-notes.md, version 40). Every other kernel, block_t 64 among them,
// takes the split heuristic's kPrologueSteps (2.2-2.7 of 64-token steps when they ran the
// lockstep schedule, version 21; not re-measured for the pair order).
constexpr int kSeesawPartStartSteps = 6;
constexpr int part_start_steps(VariantShape shape) {
  return shape.block_h == kBlockH && shape.block_t == 32 ? kSeesawPartStartSteps
                                                         : kPrologueSteps;
}

// The swapped kernel (swapped.cuh), for up to 16 heads: with 16 heads the 64 rows of the
// kernel above would be three quarters padding, so its MMAs take the tile's 64 tokens as M
// and the 16 heads as N (Sᵀ = K·Qᵀ, Oᵀ = Vᵀ·Pᵀ). One MMA warpgroup does a whole tile;
// 64-token tiles, the M of one MMA. Its variants are the wgmma_h16_* names.
constexpr int kSwappedBlockH = 16;
constexpr int kSwappedBlockT = 64;
constexpr int kSwappedWarps = 4;
constexpr bool uses_swapped_operands(VariantShape shape) {
  return shape.block_h == kSwappedBlockH;
}

// Split launches of two splits run the 64-head kernel's CTAs as clusters of two that merge
// their halves of each sequence through shared memory, with no partial rows and no combine
// (decode.cuh, merge_pair).
constexpr bool merges_split_pairs(VariantShape shape) {
  return shape.family == KernelFamily::kWgmma && !uses_swapped_operands(shape);
}

// Threads per CTA: the MMA warps and the copy warpgroup.
constexpr int threads_of(VariantShape shape) { return 32 * shape.warps + kCopyThreads; }

constexpr bool is_valid_shape(VariantShape shape) {
  if (shape.family != KernelFamily::kWgmma || shape.stages < 2 || shape.stages > 4) return false;
  if (uses_swapped_operands(shape)) {
    return shape.warps == kSwappedWarps && shape.block_t == kSwappedBlockT;
  }
  return shape.block_h == kBlockH && shape.warps == kWarps &&
         (shape.block_t == 32 || shape.block_t == 64) && !shape.whole_tiles;
}

struct SmemPlan {
  int q_bytes;         // block_h rows of q, swizzled layout
  int kv_stage_bytes;  // one KV tile: block_t rows, swizzled layout
  int kv_bytes;        // stages · kv_stage_bytes
  int prob_bytes;      // P tile, bf16, padded rows (swapped: Pᵀ, swizzled layout)
  int row_stat_bytes;  // per warpgroup and head row its final sum, and a row of the maximum
                       // handed over (swapped: per MMA warp and head)
  int barrier_bytes;   // per stage: "first piece landed", "rest landed", and the two pieces'
                       // "free" mbarriers
  int cursor_bytes;    // balanced launches: the MMA warpgroups' and the copy warpgroup's cursor
  int pair_bytes;      // split pairs (decode.cuh, merge_pair): the other CTA's row maxima and
                       // sums, and the two mbarriers it arrives on (swapped: none)
  int total_bytes;
};

constexpr int prob_row_elems(int block_t) { return block_t + kProbPadElems; }

constexpr SmemPlan plan_smem(VariantShape shape, int d_qk) {
  SmemPlan plan{};
  plan.q_bytes = shape.block_h * d_qk * 2;
  plan.kv_stage_bytes = shape.block_t * d_qk * 2;
  plan.kv_bytes = shape.stages * plan.kv_stage_bytes;
  if (uses_swapped_operands(shape)) {
    // Pᵀ is the B operand of Oᵀ += Vᵀ·Pᵀ: its 16 head rows of 64 tokens are one span, two
    // atoms, swizzled (no padding).
    plan.prob_bytes = shape.block_h * shape.block_t * 2;
    plan.row_stat_bytes = shape.warps * shape.block_h * 4;
  } else {
    plan.prob_bytes = kBlockH * prob_row_elems(shape.block_t) * 2;
    // Per warpgroup its final row sums, and the maximum a warpgroup hands over with its P.
    plan.row_stat_bytes = (kWarpGroups + 1) * kBlockH * 4;
  }
  plan.barrier_bytes = 4 * shape.stages * 8;
  plan.cursor_bytes = 2 * static_cast<int>(sizeof(balanced::PartsCursor));
  plan.pair_bytes = uses_swapped_operands(shape) ? 0 : kBlockH * 8 + 2 * 8;
  plan.total_bytes = plan.q_bytes + plan.kv_bytes + plan.prob_bytes + plan.row_stat_bytes +
                     plan.barrier_bytes + plan.cursor_bytes + plan.pair_bytes;
  return plan;
}

}  // namespace mlalab::kernels::wgmma
