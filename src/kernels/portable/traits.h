#pragma once
// Everything derived from a variant's four knobs (block_h, block_t, warps, stages) and the
// layout's d_qk: thread counts, how warps share the two matrix products, the shared-memory
// plan. Plain constexpr host code, so the feasibility pruning and `mlalab configs` compute the
// same plan as the kernel without a GPU.
#include "core/kernel_config.h"
#include "core/layout.h"
#include "kernels/balanced_partition.h"

namespace mlalab::kernels::portable {

// The warp-level MMA is m16n8k16 (bf16 in, fp32 accumulate).
constexpr int kMmaM = 16;
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;
constexpr int kWarpSize = 32;
constexpr int kChunkElems = 8;  // one 16-byte cp.async / ldmatrix row = 8 bf16

// Why the paddings: a bf16 row of 576 (or 512) elements is a multiple of 128 bytes, so the 8
// rows one ldmatrix reads would all hit the same banks. 8 extra elements shift each row by 16
// bytes, which spreads any 8 consecutive rows over all 32 banks.
constexpr int kRowPadElems = 8;
// Score rows are written as float2 by MMA fragments (4 rows per half-warp); 8 extra floats
// place those 4 rows in disjoint banks for every block_t in {16, 32, 64}.
constexpr int kScorePadFloats = 8;
// Probability rows are read by ldmatrix; 8 extra bf16 make their 8-row reads conflict-free.
constexpr int kProbPadElems = 8;

// How the warps share S = Q·Kᵀ (block_h × block_t, reduced over d_qk): warps_m · warps_n ·
// warps_k warps, each computing (block_h / warps_m) × (block_t / warps_n) over
// d_qk / warps_k, the k-slices' partial sums meeting in shared memory. Of the splits that divide the tiles and
// both layouts' 36 or 32 k-steps evenly, the one that reads the fewest fragment bytes from
// shared memory per step: each warp loads its A (q, 512 B per m-tile) and B (K, 256 B per
// n-tile) fragments at every k-step, and these ldmatrix reads share the memory pipeline with
// the KV tile's cp.async copies. A warp keeps at most 4 MMA tiles of S (16 accumulators) beside
// its O accumulators. Ties go to fewer k-slices (less shared memory for partial sums).
struct ScoreWarpLayout {
  int warps_m;
  int warps_n;
  int warps_k;
};

constexpr int kMaxScoreTilesPerWarp = 4;

constexpr ScoreWarpLayout score_warp_layout(VariantShape shape) {
  const int m_tiles = shape.block_h / kMmaM;
  const int n_tiles = shape.block_t / kMmaN;
  constexpr int kKSteps[2] = {dims_of(Layout::kV3).d_qk / kMmaK, dims_of(Layout::kV4).d_qk / kMmaK};
  ScoreWarpLayout best{0, 0, 0};
  long long best_bytes = -1;
  for (int warps_m = 1; warps_m <= shape.warps; warps_m *= 2) {
    for (int warps_n = 1; warps_m * warps_n <= shape.warps; warps_n *= 2) {
      const int warps_k = shape.warps / (warps_m * warps_n);
      if (m_tiles % warps_m != 0 || n_tiles % warps_n != 0 ||
          kKSteps[0] % warps_k != 0 || kKSteps[1] % warps_k != 0 ||
          warps_m * warps_n * warps_k != shape.warps) {
        continue;
      }
      const int tiles_m = m_tiles / warps_m;
      const int tiles_n = n_tiles / warps_n;
      if (tiles_m * tiles_n > kMaxScoreTilesPerWarp) continue;
      const long long bytes = static_cast<long long>(shape.warps) * (kKSteps[0] / warps_k) *
                              (tiles_m * 512 + tiles_n * 256);
      if (best_bytes < 0 || bytes < best_bytes ||
          (bytes == best_bytes && warps_k < best.warps_k)) {
        best = {warps_m, warps_n, warps_k};
        best_bytes = bytes;
      }
    }
  }
  return best;
}

// O = P·V (block_h × d_v) is split across warps by d_v columns; every warp keeps all block_h
// rows of its columns in fp32 registers for the whole KV loop.
constexpr int output_accumulators_per_thread(VariantShape shape) {
  return shape.block_h * kDv / (shape.warps * kWarpSize);
}

// Bytes of each shared-memory region, in the order they are laid out.
struct SmemPlan {
  int q_bytes;         // block_h rows of q, padded
  int kv_stage_bytes;  // one KV tile: block_t padded rows
  int kv_bytes;        // stages · kv_stage_bytes
  int score_bytes;     // warps_k partial S tiles, fp32
  int prob_bytes;      // P tile, bf16
  int row_state_bytes; // per head row: rescale factor, running max, running sum
  int cursor_bytes;    // balanced launches: the CTA's cursor over its parts
  int total_bytes;
};

constexpr int padded_row_elems(int d_qk) { return d_qk + kRowPadElems; }
constexpr int score_row_floats(int block_t) { return block_t + kScorePadFloats; }
constexpr int prob_row_elems(int block_t) { return block_t + kProbPadElems; }
constexpr int kRowStateFloats = 3;

constexpr SmemPlan plan_smem(VariantShape shape, int d_qk) {
  constexpr int kBf16Bytes = 2;
  constexpr int kFloatBytes = 4;
  SmemPlan plan{};
  plan.q_bytes = shape.block_h * padded_row_elems(d_qk) * kBf16Bytes;
  plan.kv_stage_bytes = shape.block_t * padded_row_elems(d_qk) * kBf16Bytes;
  plan.kv_bytes = shape.stages * plan.kv_stage_bytes;
  plan.score_bytes = score_warp_layout(shape).warps_k * shape.block_h *
                     score_row_floats(shape.block_t) * kFloatBytes;
  plan.prob_bytes = shape.block_h * prob_row_elems(shape.block_t) * kBf16Bytes;
  plan.row_state_bytes = kRowStateFloats * shape.block_h * kFloatBytes;
  plan.cursor_bytes = static_cast<int>(sizeof(balanced::PartsCursor));
  plan.total_bytes = plan.q_bytes + plan.kv_bytes + plan.score_bytes + plan.prob_bytes +
                     plan.row_state_bytes + plan.cursor_bytes;
  return plan;
}

// The invariants every compiled variant must satisfy; the kernel static_asserts this and
// the registry refuses shapes that fail it.
constexpr bool is_valid_shape(VariantShape shape) {
  const auto layout = score_warp_layout(shape);
  if (layout.warps_m == 0) return false;  // no split of S fits the accumulator budget
  const bool pow2_heads = shape.block_h == 16 || shape.block_h == 32 || shape.block_h == 64;
  const bool pow2_tokens = shape.block_t == 16 || shape.block_t == 32 || shape.block_t == 64;
  const bool warps_ok = shape.warps == 4 || shape.warps == 8;
  const bool stages_ok = shape.stages >= 1 && shape.stages <= 4;
  if (!(pow2_heads && pow2_tokens && warps_ok && stages_ok) || shape.whole_tiles) return false;
  // Each warp owns a whole number of 8-column MMA tiles of d_v, and the d_qk reduction of
  // both layouts (36 or 32 k-steps) divides evenly among warps_k.
  const bool dv_split = (kDv / shape.warps) % kMmaN == 0;
  const bool k_split = (dims_of(Layout::kV3).d_qk / kMmaK) % layout.warps_k == 0 &&
                       (dims_of(Layout::kV4).d_qk / kMmaK) % layout.warps_k == 0;
  const bool rows_split = (shape.warps * kWarpSize) % shape.block_h == 0;
  return dv_split && k_split && rows_split;
}

}  // namespace mlalab::kernels::portable
