#pragma once
// The wgmma MLA decode kernel (sm_90a): Hopper's warpgroup MMA reads q and the KV tile
// straight from shared memory, so the tensor cores are fed without the ldmatrix traffic that
// bounds the portable family at H = 128. Two knobs, block_t (32 or 64) and stages; the CTA is
// always 64 heads, two MMA warpgroups and one copy warpgroup (traits.h).
//
// Per part of a CTA's work (its split, or each sequence whose steps its balanced share holds),
// a copy warpgroup loads the 64 query rows, then every block_t-token KV tile of the part into a
// ring of `stages` shared-memory stages (tile_copies.cuh). The two MMA warpgroups share the tiles
// in the seesaw (traits.h), and each accumulates O over its d_v columns [256·g, 256·g + 256),
// A = P from registers, B = the tile read as V, transposed: tiles alternate between the groups;
// a tile's group computes S = Q·Kᵀ over all its tokens and the softmax from the running maximum
// the other handed over after the tile before, then hands its P and maximum over in turn; both
// add the tile's P·V. One warpgroup's softmax runs while the other's MMAs keep the tensor cores
// busy (docs/perf-notes.md, version 26). In what order the P·Vs are issued depends on block_t:
// at 32 each group's iteration adds the other's tile before its own, at 64 (two stages) tiles
// go in pairs whose P·Vs are issued as soon as each P exists (version 42).
//
// Finally each warpgroup's row sums meet in shared memory, and O is normalised and written (or
// the part's partial result); a split CTA's final rows through shared memory, one bulk copy per
// row (finish_part). Two splits run as clusters of two CTAs that merge their halves of a
// sequence through each other's shared memory instead (merge_pair).
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/decode_common.cuh"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/kernel.h"
#include "kernels/wgmma/primitives.cuh"
#include "kernels/wgmma/tile_copies.cuh"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {

using portable::ldmatrix_x4;
using portable::pack_bf16x2;
using portable::smem_address;

template <int kBlockT, int kStages>
struct Traits {
  static constexpr VariantShape kShape{.family = KernelFamily::kWgmma,
                                       .block_h = kBlockH,
                                       .block_t = kBlockT,
                                       .warps = kWarps,
                                       .stages = kStages};
  static_assert(is_valid_shape(kShape), "variant outside the family's invariants (traits.h)");
  // The swizzle atoms of every tile start on 1,024-byte boundaries (traits.h), in both layouts.
  static_assert(plan_smem(kShape, dims_of(Layout::kV3).d_qk).q_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV3).d_qk).kv_stage_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV4).d_qk).q_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV4).d_qk).kv_stage_bytes % kAtomBytes == 0 &&
                dims_of(Layout::kV3).d_qk % kSpanElems == 0 &&
                dims_of(Layout::kV4).d_qk % kSpanElems == 0);

  // A split CTA's final rows, staged where q's tile and the ring were (finish_part).
  static constexpr int kStagedRowElems = kDv + kStagedRowPadBytes / 2;
  static_assert(kBlockH * kStagedRowElems * 2 <=
                plan_smem(kShape, dims_of(Layout::kV4).d_qk).q_bytes +
                    plan_smem(kShape, dims_of(Layout::kV4).d_qk).kv_bytes);

  // A split pair's exchange (merge_pair): the half rows one CTA finishes (each warpgroup's
  // half of its columns, the two halves side by side), staged with the same padding, and after
  // them the other's share of those, fp32 in the order its threads hold them, a region per
  // warpgroup.
  static constexpr int kPairRowElems = kDv / 2 + kStagedRowPadBytes / 2;
  static constexpr int kPairRowsOffset = 34 * 1024;  // past the 33,792 staged bytes
  static constexpr int kPairShareBytes = kBlockH * kDv / 2 / kWarpGroups * 4;  // per group
  static_assert(kBlockH * kPairRowElems * 2 <= kPairRowsOffset &&
                kPairRowsOffset + kBlockH * kDv / 2 * 4 <=
                    plan_smem(kShape, dims_of(Layout::kV4).d_qk).q_bytes +
                        plan_smem(kShape, dims_of(Layout::kV4).d_qk).kv_bytes);

  static constexpr int kGroupColumns = kDv / kWarpGroups;     // d_v columns of O per group
  static constexpr int kPvN = 64;                             // N of one O += P·V MMA
  static constexpr int kPvTiles = kGroupColumns / kPvN;
  static constexpr int kPvKSteps = kBlockT / 16;
  static constexpr int kProbRow = prob_row_elems(kBlockT);
};

// A split pair's two CTAs are neighbours in the grid, a cluster of two: the block of the
// grid's usual order (batch, split, head block) that this CTA computes.
__device__ __forceinline__ int pair_block(const DecodeArgs& args) {
  const int pair = blockIdx.x / 2;
  const int split = blockIdx.x % 2;
  return (pair / args.head_blocks * 2 + split) * args.head_blocks + pair % args.head_blocks;
}

template <int kBlockT, int kStages, bool kBalanced>
__global__ void __launch_bounds__(kThreads, 1)
    decode_kernel(const __grid_constant__ WgmmaArgs kernel_args) {
#ifdef MLALAB_WGMMA_AVAILABLE
  wait_for_prior_grid();  // a dependent launch (grid_dependency.cuh)
  const DecodeArgs& args = kernel_args.decode;
  timeline_cta_started(args, kStages, /*mma_events=*/true);
  using T = Traits<kBlockT, kStages>;
  const DecodeParams& p = args.params;
  // 1,024-byte aligned: every swizzle atom of the tiles starts on a 1,024-byte boundary.
  extern __shared__ __align__(1024) unsigned char smem_base[];
  const SmemPlan plan = plan_smem(T::kShape, p.d_qk);
  const std::uint32_t q_tile = smem_address(smem_base);
  const std::uint32_t kv_tiles = q_tile + plan.q_bytes;
  bf16* probs = reinterpret_cast<bf16*>(smem_base + plan.q_bytes + plan.kv_bytes);
  // [warpgroup][head row]: each group's final row sums; the handed-over maximum in a third row.
  float* row_stats = reinterpret_cast<float*>(smem_base + plan.q_bytes + plan.kv_bytes +
                                              plan.prob_bytes);
  // The ring's barriers (tile_copies.cuh); each group's 4 warps free a piece of a stage.
  const TileRing<kStages> ring(
      q_tile, kv_tiles,
      q_tile + plan.q_bytes + plan.kv_bytes + plan.prob_bytes + plan.row_stat_bytes,
      plan.q_bytes, plan.kv_stage_bytes);
  // A split pair's exchange (merge_pair): the other CTA's row maximum and sum per head row, and
  // the barriers its arrivals complete: its stats landed, its share of this CTA's rows landed.
  const int pair_offset = plan.q_bytes + plan.kv_bytes + plan.prob_bytes + plan.row_stat_bytes +
                          plan.barrier_bytes + plan.cursor_bytes;
  const float2* peer_stats = reinterpret_cast<const float2*>(smem_base + pair_offset);
  const std::uint32_t peer_stats_landed = q_tile + pair_offset + kBlockH * 8;
  const std::uint32_t peer_rows_landed = peer_stats_landed + 8;
  constexpr int kStatThreads = kMmaThreads / 8;  // lane % 4 == 0 of warpgroup 0: two rows each

  // A split CTA's one part, or a balanced worker's parts, which the copy warpgroup and the
  // MMA warpgroups walk apart, each through its cursor.
  using Parts = CtaParts<kBlockH, kBlockT, kThreads, kBalanced>;
  CtaWork work{};
  bool merging = false;  // a split pair that merges (merge_pair)
  if constexpr (kBalanced) {
    const PartsCursor first = Parts::start(args, smem_base);
    if (threadIdx.x == 0) ring.cursor(0) = ring.cursor(1) = first;
  } else {
    work = Parts::split_part(args, args.split_pairs ? pair_block(args) : blockIdx.x);
    if (args.split_pairs) {
      // The pair writes the final rows. A sequence of one step is split 0's alone.
      work.part_slot = -1;
      merging = Parts::steps_of(work.token_end) >= 2;
      if (!merging && blockIdx.x % 2 == 1) {
        timeline_part_done(args, work);  // a split past the sequence's end, as unpaired
        return;
      }
    }
    if (work.steps <= 0) {
      write_empty_result<kBlockH, kThreads>(args, work);
      timeline_part_done(args, work);
      return;
    }
  }
  if (threadIdx.x == 0) {
    timeline_cta_event(args, &CtaTimeline::work_known_clock);
    ring.init_barriers(kWarps / kWarpGroups);
    if (merging) {
      mbarrier_init(peer_stats_landed, kStatThreads);
      mbarrier_init(peer_rows_landed, kMmaThreads);
      fence_barrier_init();
    }
  }
  __syncthreads();
  if (merging) cluster_arrive();  // waited for before the first access of the other CTA
  const int lane = threadIdx.x % 32;

  // ---- The copy warpgroup (tile_copies.cuh) ------------------------------------------------
  if (threadIdx.x >= kMmaThreads) {
    release_registers<kCopyRegisters>();
    run_copy_warpgroup<kBlockH, kBlockT, kStages, kMmaThreads, Parts, kBalanced>(
        kernel_args, ring, work, ring.cursor(1));
    allow_dependent_launch();
    if (merging) cluster_wait();
    return;
  }
  claim_registers<kMmaRegisters>();

  // ---- The MMA warpgroups --------------------------------------------------------------
  // Broadcast from lane 0 so that ptxas knows it is warp-uniform: the wgmma descriptors
  // derived from it then stay in uniform registers (no per-MMA R2UR moves; 824 → 568
  // instructions per step of the split kernel at block_t 64).
  const int warp_group = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  const int warp_in_group = threadIdx.x / 32 % 4;

  // In every accumulator this thread holds head rows `rows[0]` and `rows[1]` (the wgmma
  // layout: warp w of a group owns rows 16w..16w+15), and in each 8-column block the two
  // columns 2·(lane % 4) and 2·(lane % 4) + 1.
  const int rows[2] = {warp_in_group * 16 + lane / 4, warp_in_group * 16 + lane / 4 + 8};
  const int column_in_block = 2 * (lane % 4);
  // Q is the K-major A operand, K the K-major B operand (the whole tile), V the MN-major B
  // operand (this group's d_v columns) of the same tile.
  const int k_steps = p.d_qk / 16;

  int ring_tile = 0;  // as the copy warpgroup counts
  // O times a factor per row half (accumulator i holds row half i / 2 % 2).
  const auto rescale_out = [](float (&out_acc)[T::kPvTiles][32], const float (&factor)[2]) {
#pragma unroll
    for (int tile = 0; tile < T::kPvTiles; ++tile) {
#pragma unroll
      for (int i = 0; i < 32; ++i) out_acc[tile][i] *= factor[i / 2 % 2];
    }
  };
  // O += P·V over this group's d_v columns of the tile at `kv_tile`, inside the caller's
  // fence…commit span: A = P from registers, B = V, the MN-major operand (64 columns per span,
  // spans span_stride apart, 8 tokens per atom).
  const auto accumulate_pv = [&](float (&out_acc)[T::kPvTiles][32], std::uint32_t kv_tile,
                                 const std::uint32_t (&p_frag)[T::kPvKSteps][4]) {
    const std::uint64_t v_desc = matrix_descriptor(
        kv_tile + warp_group * (T::kGroupColumns / kSpanElems) * span_stride_bytes(kBlockT),
        span_stride_bytes(kBlockT), kAtomBytes);
#pragma unroll
    for (int kk = 0; kk < T::kPvKSteps; ++kk) {
#pragma unroll
      for (int tile = 0; tile < T::kPvTiles; ++tile) {
        mma_m64n64k16_rs_transposed_b(
            out_acc[tile], p_frag[kk],
            advance(v_desc, kk * 2 * kAtomBytes +
                                tile * (T::kPvN / kSpanElems) * span_stride_bytes(kBlockT)));
      }
    }
  };
  // Writes the bf16 rows the MMA threads staged from the start of shared memory (head row r at
  // r · row_elems): each row's `pieces` runs of `columns`, staged side by side, to columns
  // first_column + piece · piece_stride of its output row, a bulk copy per run.
  const auto store_staged_rows = [&](int row_elems, int first_column, int columns,
                                     int pieces = 1, int piece_stride = 0) {
    fence_async_proxy();  // staged by the generic proxy, read by the bulk copies' async one
    sync_mma_threads<kMmaThreads>();
    const int row = threadIdx.x % kBlockH;
    const int piece = threadIdx.x / kBlockH;
    if (piece < pieces && work.head0 + row < p.num_heads) {
      bulk_store(ResultSlot(args, work, work.head0 + row).out_row + first_column +
                     piece * piece_stride,
                 q_tile + (row * row_elems + piece * columns) * 2, columns * 2);
      bulk_stores_read_wait();
    }
  };

  // ---- A split pair's merge (LaunchPlan::split_pairs) -------------------------------------
  // The pair's CTAs, ranks 0 and 1 of a cluster, hold O, the running maximum and the row sums
  // of their halves of one sequence's tokens. Each sends the other its row statistics, then
  // its share of the columns the other finishes: O rescaled to the pair's maximum and
  // normalised by the pair's sum. Each warpgroup's 256 d_v columns are its 4 P·V tiles; of
  // them rank r finishes tiles 2r and 2r + 1, for every head: its share plus the other's, out
  // by two bulk copies per row, and sends the other two to the same warpgroup of the other
  // CTA. Both warpgroups send and merge at once: with one sending and the other merging, the
  // merge took ~6 µs, its staging ~1.3 of it (docs/perf-notes.md, version 63). The other's
  // shares land where q's tile and the ring were: they are sent only once this CTA's stats
  // have arrived, which this CTA sends only after its last tile. Nothing else crosses: no
  // partial rows in global memory, no combine.
  const auto merge_pair = [&](const float (&out_acc)[T::kPvTiles][32],
                              const float (&running_max)[2]) {
    const int rank = blockIdx.x % 2;
    const int peer = rank ^ 1;
    // Its steps are recorded by thread 0 (kernels/timeline.h; nothing in a normal build).
    const auto merge_event = [&](std::uint32_t CtaTimeline::*event) {
      if (threadIdx.x == 0) timeline_cta_event(args, event);
    };
    merge_event(&CtaTimeline::merge_begin_clock);
    cluster_wait();  // the other's barriers are initialised
    float row_sum[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      row_sum[half] = row_stats[rows[half]] + row_stats[kBlockH + rows[half]];
    }
    if (warp_group == 0 && lane % 4 == 0) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        store_to_peer(peer_address(q_tile + pair_offset + rows[half] * 8, peer),
                      running_max[half], row_sum[half]);
      }
      mbarrier_arrive_on_peer(peer_address(peer_stats_landed, peer));
    }
    mbarrier_wait_for_peer(peer_stats_landed, 0);
    merge_event(&CtaTimeline::merge_stats_clock);

    // What this CTA's O weighs in each row's result: 2^(m − M) / (L + the sink's term), M the
    // pair's maximum and L its sum at M. Rows past the last head are neither sent nor written.
    bool valid[2];
    float weight[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int head = work.head0 + rows[half];
      valid[half] = head < p.num_heads;
      const float2 other = peer_stats[rows[half]];
      const float pair_max = fmaxf(running_max[half], other.x);
      const float own_factor = exp2_approx(running_max[half] - pair_max);
      const ResultRow result(args, work, min(head, p.num_heads - 1), pair_max,
                             own_factor * row_sum[half] +
                                 exp2_approx(other.x - pair_max) * other.y);
      weight[half] = own_factor * result.inverse();
      if (valid[half] && rank == 0 && warp_group == 0 && lane % 4 == 0) result.store_lse();
    }
    // Four O values of a row (two column pairs, 8 apart) of P·V tiles kFirstTile and
    // kFirstTile + 1, as this thread holds them; the thread of the other CTA in the same
    // place holds the same ones, so they cross as slot k · 128 + (thread in group) of its
    // group's exchange. `column` is the quad's within the two tiles. The tiles are a constant
    // (a branch on the rank picks them): indexed by the rank, O went to local memory.
    constexpr int kSharedTiles = T::kPvTiles / 2;
    static_assert(kSharedTiles * T::kPvN / 16 * 2 * 128 * 16 == T::kPairShareBytes,
                  "the quads' indices fill a group's exchange exactly");
    static_assert(kWarpGroups * kBlockH <= kMmaThreads, "a thread per row and run of its store");
    const int slot = threadIdx.x % 128;
    const auto for_each_quad = [&]<int kFirstTile>(const auto& visit) {
#pragma unroll
      for (int tile = 0; tile < kSharedTiles; ++tile) {
#pragma unroll
        for (int block = 0; block < T::kPvN / 8; block += 2) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            if (!valid[half]) continue;
            const float* first = &out_acc[kFirstTile + tile][block * 4 + half * 2];
            visit(((tile * (T::kPvN / 8) + block) / 2 * 2 + half) * 128 + slot, half,
                  tile * T::kPvN + block * 8 + column_in_block,
                  make_float4(first[0], first[1], first[4], first[5]));
          }
        }
      }
    };
    const int exchange_offset = T::kPairRowsOffset + warp_group * T::kPairShareBytes;
    const std::uint32_t exchange_there = peer_address(q_tile + exchange_offset, peer);
    const auto send = [&](int index, int half, int, float4 o) {
      store_to_peer(exchange_there + index * 16, o.x * weight[half], o.y * weight[half],
                    o.z * weight[half], o.w * weight[half]);
    };
    if (rank == 0) {
      for_each_quad.template operator()<kSharedTiles>(send);
    } else {
      for_each_quad.template operator()<0>(send);
    }
    mbarrier_arrive_on_peer(peer_address(peer_rows_landed, peer));
    merge_event(&CtaTimeline::merge_sent_clock);
    mbarrier_wait_for_peer(peer_rows_landed, 0);
    merge_event(&CtaTimeline::merge_rows_clock);
    const float4* exchange_here = reinterpret_cast<const float4*>(smem_base + exchange_offset);
    bf16* staged = reinterpret_cast<bf16*>(smem_base) + warp_group * kSharedTiles * T::kPvN;
    const auto merge = [&](int index, int half, int column, float4 o) {
      const float4 other = exchange_here[index];
      bf16* row = staged + rows[half] * T::kPairRowElems + column;
      *reinterpret_cast<std::uint32_t*>(row) = pack_bf16x2(fmaf(o.x, weight[half], other.x),
                                                           fmaf(o.y, weight[half], other.y));
      *reinterpret_cast<std::uint32_t*>(row + 8) = pack_bf16x2(
          fmaf(o.z, weight[half], other.z), fmaf(o.w, weight[half], other.w));
    };
    if (rank == 0) {
      for_each_quad.template operator()<0>(merge);
    } else {
      for_each_quad.template operator()<kSharedTiles>(merge);
    }
    merge_event(&CtaTimeline::merge_staged_clock);
    // Row r's two runs: columns 128·rank and 256 + 128·rank (d_v 512: kSharedTiles · kPvN =
    // 128 columns per group and rank).
    store_staged_rows(T::kPairRowElems, rank * kSharedTiles * T::kPvN, kSharedTiles * T::kPvN,
                      kWarpGroups, T::kGroupColumns);
    merge_event(&CtaTimeline::merge_stored_clock);
  };

  // ---- Epilogue: the two groups' row sums meet, normalise and write ----------------------
  // A split CTA's final rows (bf16) leave through shared memory: its tiles are all consumed by
  // then, so the rows are staged where q's tile was, and written by one bulk copy each. From
  // the accumulators every warp store wrote 16 bytes into each of 8 rows, half a sector each.
  // fp32 partial rows (32 bytes per row and store: whole sectors) and a balanced worker's rows
  // (its next part is already coming in) are stored directly.
  const auto finish_part = [&](float (&out_acc)[T::kPvTiles][32], const float (&running_max)[2],
                               float (&running_sum)[2]) {
    allow_dependent_launch();
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      running_sum[half] += __shfl_xor_sync(0xffffffffu, running_sum[half], 1);
      running_sum[half] += __shfl_xor_sync(0xffffffffu, running_sum[half], 2);
      if (lane % 4 == 0) row_stats[warp_group * kBlockH + rows[half]] = running_sum[half];
    }
    sync_mma_threads<kMmaThreads>();
    if constexpr (!kBalanced) {
      if (merging) {
        merge_pair(out_acc, running_max);
        return;
      }
    }

    // Calls store(result, row, column, o0, o1) for each pair of O columns this thread holds in
    // a head that exists (o0, o1 not yet normalised: `result` knows the row's factor), and
    // stores the row's lse.
    const auto for_each_pair = [&](const auto& store) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int head = work.head0 + rows[half];
        if (head >= p.num_heads) continue;
        const ResultRow result(args, work, head, running_max[half],
                               row_stats[rows[half]] + row_stats[kBlockH + rows[half]]);
        const int column0 = warp_group * T::kGroupColumns + column_in_block;
#pragma unroll
        for (int tile = 0; tile < T::kPvTiles; ++tile) {
#pragma unroll
          for (int block = 0; block < T::kPvN / 8; ++block) {
            store(result, rows[half], column0 + tile * T::kPvN + block * 8,
                  out_acc[tile][block * 4 + half * 2], out_acc[tile][block * 4 + half * 2 + 1]);
          }
        }
        if (warp_group == 0 && lane % 4 == 0) result.store_lse();
      }
    };
    // Each path its own loop: one loop choosing per store made the direct path's CTAs 1.2-1.6 %
    // slower (docs/perf-notes.md, version 36).
    if (!kBalanced && !work.partial()) {
      // Row r staged 16 bytes past whole rows: the 8 rows of a warp store meet no bank twice.
      bf16* staged = reinterpret_cast<bf16*>(smem_base);
      for_each_pair([&](const ResultRow& result, int row, int column, float o0, float o1) {
        *reinterpret_cast<std::uint32_t*>(staged + row * T::kStagedRowElems + column) =
            pack_bf16x2(o0 * result.inverse(), o1 * result.inverse());
      });
      store_staged_rows(T::kStagedRowElems, 0, kDv);
      return;
    }
    for_each_pair([](const ResultRow& result, int, int column, float o0, float o1) {
      result.store(column, o0, o1);
    });
  };

  // ---- The seesaw (traits.h) ---------------------------------------------------------------
  // The tiles of a part alternate between the warpgroups (block_t 32: tile t is group t % 2's;
  // 64: an odd part's first tile is group 1's, then each pair's first group 0's and second
  // group 1's). A tile's group computes S = Q·Kᵀ over all its tokens, moves the running maximum
  // on from the one after the tile before, and hands P and the new maximum to the other
  // warpgroup; both then add the tile's P·V to their d_v columns. Warp w
  // of a group holds the same 16 head rows as warp w of the other, so each hand-off is between
  // those two warps: named barrier 3 + 4·g + w carries group g's tiles (hand_off_arrive / _sync),
  // and P and the maximum stay in one buffer each, which a warp overwrites only after it has read
  // the other's (program order, the two directions alternating).
  float* handed_max = row_stats + kWarpGroups * kBlockH;  // [head row]
  const int my_hand_off = 3 + 4 * warp_group + warp_in_group;
  const int their_hand_off = 3 + 4 * (1 - warp_group) + warp_in_group;
  const auto seesaw_part = [&] {
    constexpr int kScoreFloats = kBlockT / 2;  // S over the whole tile: N = block_t
    // S's k-steps whose A operand, q, is held in registers (load_q_fragments): 16 registers a
    // span. At block_t 32 two spans in the split kernel (three spill), one in the balanced
    // kernel, whose parts' bookkeeping holds more (two spill there); at 64, where S and P take
    // twice the registers, one and none (one spills 12 bytes in the balanced kernel).
    constexpr int kQFragmentKSteps =
        (kBlockT == 64 ? (kBalanced ? 0 : 1) : (kBalanced ? 1 : 2)) * kKStepsPerSpan;
    float out_acc[T::kPvTiles][32];
    zero_accumulators(out_acc);
    float running_max[2] = {-INFINITY, -INFINITY};  // base-2 logits, scaled
    float running_sum[2] = {0.0f, 0.0f};            // over this thread's columns of its tiles
    // q's first spans stay in registers as the A fragments of S, the rest is read from shared
    // memory for every tile: a k-step so fed reads 1 KB of shared memory instead of 3, which
    // bound S at N = 32 (docs/perf-notes.md, version 38). Loaded once per part, once q has
    // landed; the A fragment of each warp's 16 rows, as P's is for P·V.
    std::uint32_t q_fragments[kQFragmentKSteps > 0 ? kQFragmentKSteps : 1][4];
    const auto load_q_fragments = [&] {
      const int row = warp_in_group * 16 + lane % 16;
#pragma unroll
      for (int k = 0; k < kQFragmentKSteps; ++k) {
        const int chunk = 2 * k + lane / 16;  // 16-byte chunk of the row (8 per span)
        ldmatrix_x4(q_fragments[k],
                    q_tile + chunk / 8 * span_stride_bytes(kBlockH) + row * kSpanBytes +
                        (chunk % 8 ^ row % 8) * kChunkBytes);
      }
    };
    const int first_tile = ring_tile;
    const auto stage_of = [&](int t) { return (first_tile + t) % kStages; };
    // Warp 0 of the group records its tile events (kernels/timeline.h; nothing in a normal
    // build).
    const auto mma_event = [&](int t, std::uint32_t TimelineTile::*event) {
      if (warp_in_group == 0 && lane == 0) timeline_tile_event(args, first_tile + t, event);
    };
    const auto tile_address = [&](int t) { return kv_tiles + stage_of(t) * plan.kv_stage_bytes; };
    // This warp's MMAs on tile t are done: one of the 4 arrivals that free its group's piece
    // of the stage (traits.h). The other piece's reads by this group, S's where the tile is
    // its own, were done before it handed P(t) over, which the other group takes before it
    // frees that piece.
    const auto release = [&](int t) {
      // Recorded before the arrival: after it, the copy issuer could see the free first.
      mma_event(t, warp_group == 0 ? &TimelineTile::first_freed : &TimelineTile::rest_freed);
      if (lane == 0) mbarrier_arrive(ring.piece_free(warp_group, stage_of(t)));
    };
    // P (bf16 pairs) times a factor per row half, for the rare tile that moves the maximum.
    const auto rescale_probs = [](std::uint32_t(&p_frag)[T::kPvKSteps][4],
                                  const float (&factor)[2]) {
#pragma unroll
      for (int kk = 0; kk < T::kPvKSteps; ++kk) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float2 pair =
              __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&p_frag[kk][r]));
          p_frag[kk][r] = pack_bf16x2(pair.x * factor[r % 2], pair.y * factor[r % 2]);
        }
      }
    };

    // S = Q·Kᵀ of tile t over all its tokens (N = block_t), its k-steps issued as the tile's
    // two pieces land (traits.h): q's first k-steps from registers, the rest from shared
    // memory. No zeroing: the first MMA overwrites. Committed, not waited for.
    const auto issue_scores = [&]<int kKSteps>(float (&scores)[kBlockT / 2], int t) {
      constexpr int kFirstKSteps = kFirstPieceSpans * kKStepsPerSpan;
      static_assert(kQFragmentKSteps <= kFirstKSteps);
      if (t != 0) mma_event(t, &TimelineTile::landed_wait);  // tile 0's: walk_tiles
      ring.wait_first_landed(first_tile + t);
      if (t != 0) mma_event(t, &TimelineTile::first_landed);
      const int stage = stage_of(t);
      const std::uint32_t kv_tile = tile_address(t);
      // q's descriptor from the tile address, which ptxas keeps in a uniform register
      // (version 17).
      const std::uint64_t q_desc = matrix_descriptor(
          opaque(kv_tile) - stage * plan.kv_stage_bytes - plan.q_bytes, 16, kAtomBytes);
      const std::uint64_t k_desc = matrix_descriptor(kv_tile, 16, kAtomBytes);
      // k-step k reads columns 16k..16k+15: span k / 4, a quarter of it in.
      const auto q_at = [&](int k) {
        return advance(q_desc, k / kKStepsPerSpan * span_stride_bytes(kBlockH) +
                                   k % kKStepsPerSpan * kKStepBytes);
      };
      const auto k_at = [&](int k) {
        return advance(k_desc, k / kKStepsPerSpan * span_stride_bytes(kBlockT) +
                                   k % kKStepsPerSpan * kKStepBytes);
      };
      const auto score_rs = [&]<bool kAccumulate>(int k) {
        if constexpr (kBlockT == 64) {
          mma_m64n64k16_rs<kAccumulate>(scores, q_fragments[k], k_at(k));
        } else {
          mma_m64n32k16_rs<kAccumulate>(scores, q_fragments[k], k_at(k));
        }
      };
      const auto score_ss = [&]<bool kAccumulate>(int k) {
        if constexpr (kBlockT == 64) {
          mma_m64n64k16_ss<kAccumulate>(scores, q_at(k), k_at(k));
        } else {
          mma_m64n32k16_ss<kAccumulate>(scores, q_at(k), k_at(k));
        }
      };
      fence_operands();
#pragma unroll
      for (int k = 0; k < kQFragmentKSteps; ++k) {
        if (k == 0) {
          score_rs.template operator()<false>(k);
        } else {
          score_rs.template operator()<true>(k);
        }
      }
#pragma unroll
      for (int k = kQFragmentKSteps; k < kFirstKSteps; ++k) {
        if (k == 0) {
          score_ss.template operator()<false>(k);
        } else {
          score_ss.template operator()<true>(k);
        }
      }
      ring.wait_rest_landed(first_tile + t);
      mma_event(t, &TimelineTile::rest_landed);
      fence_operands();  // what ptxas would inject after the wait's branch (C7519)
#pragma unroll
      for (int k = kFirstKSteps; k < kKSteps; ++k) score_ss.template operator()<true>(k);
      commit_group();
    };

    // The other group's P (from shared memory, into `their_p`) and the maximum it is
    // relative to, which becomes this group's: its sum moves with it, and O's pending
    // rescale (`factor`). Returns whether the maximum moved.
    const auto take_hand_off = [&](std::uint32_t(&their_p)[T::kPvKSteps][4],
                                   float (&factor)[2]) {
      hand_off_sync(their_hand_off);
#pragma unroll
      for (int kk = 0; kk < T::kPvKSteps; ++kk) {
        ldmatrix_x4(their_p[kk],
                    smem_address(probs + (warp_in_group * 16 + lane % 16) * T::kProbRow +
                                 kk * 16 + lane / 16 * 8));
      }
      bool moved = false;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float handed = handed_max[rows[half]];
        if (handed != running_max[half]) {
          factor[half] = exp2_approx(running_max[half] - handed);
          running_max[half] = handed;
          running_sum[half] *= factor[half];
          moved = true;
        }
      }
      return moved;
    };

    // Softmax of tile t (its S in `scores`, done), moving the running maximum on: P into
    // `my_p` and to the other group with the new maximum (handed over). A move's factor
    // goes to `my_factor` and into O's pending rescale (`factor`). Returns whether it moved.
    const auto softmax_tile = [&](float (&scores)[kBlockT / 2], int t,
                                  std::uint32_t(&my_p)[T::kPvKSteps][4], float (&my_factor)[2],
                                  float (&factor)[2]) {
      pin_registers(scores);
      const int valid_tokens = min(kBlockT, work.token_end - (work.token_begin + t * kBlockT));
      float tile_max[2] = {-INFINITY, -INFINITY};  // unscaled: the scale is positive
#pragma unroll
      for (int i = 0; i < kScoreFloats; ++i) {
        const int column = i / 4 * 8 + column_in_block + i % 2;
        if (column >= valid_tokens) scores[i] = -INFINITY;
        tile_max[i / 2 % 2] = fmaxf(tile_max[i / 2 % 2], scores[i]);
      }
      bool my_move = false;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        tile_max[half] = fmaxf(tile_max[half], __shfl_xor_sync(0xffffffffu, tile_max[half], 1));
        tile_max[half] = fmaxf(tile_max[half], __shfl_xor_sync(0xffffffffu, tile_max[half], 2));
        // The maximum moves only past kMaxGrowthLog2, so that O, rescaled whenever it moves,
        // rarely is (traits.h). Every tile has a valid token, so tile_max is finite and the
        // first tile always moves it.
        const float candidate = tile_max[half] * args.scale_log2;
        if (candidate > running_max[half] + kMaxGrowthLog2) {
          my_factor[half] = exp2_approx(running_max[half] - candidate);
          running_max[half] = candidate;
          running_sum[half] *= my_factor[half];
          factor[half] *= my_factor[half];
          my_move = true;
        }
      }
      // P, scaled inside the exponent's FMA: in registers as this group's A operand (the
      // accumulator layout of S is the A fragment's), and in shared memory for the other.
      __syncwarp();  // this warp's reads of the other's P are done
#pragma unroll
      for (int i = 0; i < kScoreFloats; i += 2) {
        const int half = i / 2 % 2;
        const float p0 = exp2_approx(fmaf(scores[i], args.scale_log2, -running_max[half]));
        const float p1 = exp2_approx(fmaf(scores[i + 1], args.scale_log2, -running_max[half]));
        running_sum[half] += p0 + p1;
        my_p[i / 8][i % 8 / 2] = pack_bf16x2(p0, p1);
        *reinterpret_cast<std::uint32_t*>(probs + rows[half] * T::kProbRow + i / 4 * 8 +
                                          column_in_block) = my_p[i / 8][i % 8 / 2];
      }
      if (lane % 4 == 0) {
        handed_max[rows[0]] = running_max[0];
        handed_max[rows[1]] = running_max[1];
      }
      hand_off_arrive(my_hand_off);
      return my_move;
    };

    // The pair order's O += P·V of tile t over this group's columns (A = P, B = V of a tile
    // this group may not have waited for: see `iteration`), and its wait (accumulators in
    // flight across the loop's joins make ptxas serialize every MMA, C7514), after which this
    // warp frees the tile's stage.
    const auto add_pv = [&](int t, const std::uint32_t(&p_frag)[T::kPvKSteps][4]) {
      fence_operands();
      accumulate_pv(out_acc, tile_address(t), p_frag);
      commit_group();
    };
    const auto wait_pv = [&] {
      wait_group<0>();
#pragma unroll
      for (int tile = 0; tile < T::kPvTiles; ++tile) pin_registers(out_acc[tile]);
      __syncwarp();
    };
    const auto pv_done = [&](int t) {
      wait_pv();
      release(t);
    };
    // O to a moved maximum, where any row of the warp's moved (nothing may be in flight).
    const auto rescale_if_moved = [&](bool moved, const float (&factor)[2]) {
      if (__any_sync(0xffffffffu, moved)) rescale_out(out_acc, factor);
    };

    // ---- block_t 32: iteration t of this group --------------------------------------------
    // S of its tile t (kMine), the P·V of the other group's tile t − 1 (kTheirs), and the
    // softmax and P·V of tile t. Each kind is one straight run of code: accumulators crossing
    // a branch while their MMA is in flight make ptxas serialize every MMA of the kernel
    // (C7514, C7515). So group 0's first tile (no tile of the other's before it) and the
    // other's last tile (none of this group's after it) are iterations of their own, and both
    // P·Vs are issued after the softmax, once nothing is in flight: O is rescaled then, and
    // the other's P by this tile's move of the maximum.
    const auto iteration = [&]<int kKSteps, bool kTheirs, bool kMine>(int t) {
      float scores[kScoreFloats];
      if constexpr (kMine) issue_scores.template operator()<kKSteps>(scores, t);
      std::uint32_t their_p[T::kPvKSteps][4];
      float factor[2] = {1.0f, 1.0f};  // O's rescale: to the other's maximum, then to ours
      bool moved = false;
      if constexpr (kTheirs) moved = take_hand_off(their_p, factor);
      wait_group<0>();  // S, where this iteration has one
      std::uint32_t my_p[T::kPvKSteps][4];
      if constexpr (kMine) {
        float my_factor[2] = {1.0f, 1.0f};
        const bool my_move = softmax_tile(scores, t, my_p, my_factor, factor);
        // The other's P was relative to its maximum; O will be relative to ours.
        if constexpr (kTheirs) {
          if (__any_sync(0xffffffffu, my_move)) rescale_probs(their_p, my_factor);
        }
        moved = moved || my_move;
      }
      // Nothing is in flight. Before group 0's first tile O is still 0. This group does not
      // wait for tile t − 1 to land: its owner did and fenced the proxies before handing it
      // over, and a proxy fence anywhere on the causality path from the copy to the read
      // orders them (PTX memory model). A wait of its own cost 1-2 % (results
      // 2026-12-02-h200-handoff).
      if constexpr (kTheirs) rescale_if_moved(moved, factor);
      fence_operands();
      if constexpr (kTheirs) accumulate_pv(out_acc, tile_address(t - 1), their_p);
      if constexpr (kMine) accumulate_pv(out_acc, tile_address(t), my_p);
      commit_group();
      // Waited for here, not under the next iteration's S (C7514). Their stages go back at
      // once.
      wait_pv();
      if constexpr (kTheirs) release(t - 1);
      if constexpr (kMine) release(t);
    };

    // ---- block_t 64: the pair order ------------------------------------------------------
    // Tiles t (group 0's) and t + 1 (group 1's) share the ring's two stages, so tile t + 2
    // can be copied only as the groups finish P(t)·V(t), each freeing its piece: each adds
    // it as early as it has P(t), and the stage is free mid-pair (docs/perf-notes.md,
    // versions 42 and 44).
    //   group 0: S(t), softmax(t), hands P(t) over, O₀ += P(t)·V(t), frees its piece of t;
    //            takes P(t + 1), O₀ += P(t + 1)·V(t + 1).
    //   group 1: S(t + 1); takes P(t), O₁ += P(t)·V(t) at once, under its softmax(t + 1);
    //            hands P(t + 1) over, O₁ += P(t + 1)·V(t + 1).
    // The chain of maxima is kept: it is what keeps one group's softmax under the other's
    // MMAs (version 39). kNext: the part has tile t + 1.
    const auto owner_pair = [&]<int kKSteps, bool kNext>(int t) {
      float scores[kScoreFloats];
      issue_scores.template operator()<kKSteps>(scores, t);
      wait_group<0>();
      std::uint32_t my_p[T::kPvKSteps][4];
      float my_factor[2] = {1.0f, 1.0f};
      float factor[2] = {1.0f, 1.0f};
      rescale_if_moved(softmax_tile(scores, t, my_p, my_factor, factor), factor);
      add_pv(t, my_p);
      // Tile t's first piece is free before this group waits for P(t + 1), so that the copy
      // of tile t + 2 starts there while the other group's softmax runs.
      pv_done(t);
      if constexpr (kNext) {
        std::uint32_t their_p[T::kPvKSteps][4];
        float their_factor[2] = {1.0f, 1.0f};
        const bool moved = take_hand_off(their_p, their_factor);
        rescale_if_moved(moved, their_factor);
        add_pv(t + 1, their_p);
        pv_done(t + 1);
      }
    };
    // kMine: the part has tile t + 1.
    const auto other_pair = [&]<int kKSteps, bool kMine>(int t) {
      float scores[kScoreFloats];
      if constexpr (kMine) issue_scores.template operator()<kKSteps>(scores, t + 1);
      std::uint32_t their_p[T::kPvKSteps][4];
      float factor[2] = {1.0f, 1.0f};
      const bool moved = take_hand_off(their_p, factor);
      // S(t + 1) done before O is touched: ptxas waits for every MMA in flight before an
      // access to any accumulator (C7517).
      wait_group<0>();
      rescale_if_moved(moved, factor);
      add_pv(t, their_p);
      if constexpr (kMine) {
        // O += P(t)·V(t) stays in flight under the softmax.
        std::uint32_t my_p[T::kPvKSteps][4];
        float my_factor[2] = {1.0f, 1.0f};
        float unused[2] = {1.0f, 1.0f};
        const bool my_move = softmax_tile(scores, t + 1, my_p, my_factor, unused);
        pv_done(t);
        rescale_if_moved(my_move, my_factor);
        add_pv(t + 1, my_p);
        pv_done(t + 1);
      } else {
        pv_done(t);
      }
    };

    // The k-steps of S are a template argument, one loop per layout: a branch between
    // MMAs of one accumulator makes ptxas serialize them.
    const auto walk_tiles = [&]<int kKSteps> {
      // q lands on tile 0's barrier, which group 1's first S (of tile 1) would not wait for:
      // a TMA copy of q may land after tile 1's. The group whose S reads tile 0 (the
      // schedules below) records this wait as that tile's.
      const bool owns_first = warp_group == (kBlockT == 64 ? work.steps % 2 : 0);
      if (owns_first) mma_event(0, &TimelineTile::landed_wait);
      ring.wait_first_landed(first_tile);
      if (owns_first) mma_event(0, &TimelineTile::first_landed);
      load_q_fragments();
      if constexpr (kBlockT == 64) {
        // An odd part's first tile goes alone, before the pairs (after them, its code made
        // ptxas spill ~0.9 KB per kind: O's registers assigned apart from the loop's), and is
        // group 1's: the hand-offs then alternate from the part's first tile on, which is what
        // lets P and the maximum share one buffer each and a named barrier carry one group's.
        int t = work.steps % 2;
        if (warp_group == 0) {
          if (t == 1) other_pair.template operator()<kKSteps, false>(0);
          for (; t < work.steps; t += 2) owner_pair.template operator()<kKSteps, true>(t);
        } else {
          if (t == 1) owner_pair.template operator()<kKSteps, false>(0);
          for (; t < work.steps; t += 2) other_pair.template operator()<kKSteps, true>(t);
        }
      } else {
        int t = warp_group;
        if (warp_group == 0) {
          iteration.template operator()<kKSteps, false, true>(0);
          t = 2;
        }
        for (; t < work.steps; t += 2) iteration.template operator()<kKSteps, true, true>(t);
        if (t - 1 < work.steps) iteration.template operator()<kKSteps, true, false>(t);
      }
    };
    if (k_steps > kCommonKSteps) {
      walk_tiles.template operator()<kMaxKSteps>();
    } else {
      walk_tiles.template operator()<kCommonKSteps>();
    }
    ring_tile = first_tile + work.steps;
    finish_part(out_acc, running_max, running_sum);
  };

  if constexpr (kBalanced) {
    const auto mma_barrier = [] { sync_mma_threads<kMmaThreads>(); };
    while (Parts::next(args, ring.cursor(0), threadIdx.x == 0, mma_barrier, work)) {
      seesaw_part();
      // Parts::next's barriers would order the row_stats writes of the next part's first step
      // after this part's reads; this one is for the compiler: without it the loop's q and KV
      // descriptor arithmetic leaves the uniform datapath (285 UIADD3.64 become IADD3/IMAD.X
      // and 688 R2UR): the build without it ran the balanced seesaw 7-14 % slower
      // (docs/perf-notes.md, version 31).
      sync_mma_threads<kMmaThreads>();
      timeline_part_done(args, work);
    }
  } else {
    seesaw_part();
    timeline_part_done(args, work);
  }
#else
  // Compiled for an architecture without wgmma: the launch refuses such a device before
  // this could run (launch_variant below).
  __trap();
#endif
}

template <int kBlockT, int kStages>
LaunchStatus launch_variant(const DecodeParams& params, const LaunchPlan& plan, void* workspace,
                            cudaStream_t stream) {
  if (!device_is_sm90a()) {
    return {.error = cudaErrorNoKernelImageForDevice, .refusal = LaunchRefusal::kCannotRunHere};
  }
  using T = Traits<kBlockT, kStages>;
  return launch_decode<decode_kernel<kBlockT, kStages, false>,
                       decode_kernel<kBlockT, kStages, true>, LaunchOrder::kDependent,
                       /*kMergesSplitPairs=*/true>(
      kBlockH, kThreads, plan_smem(T::kShape, params.d_qk).total_bytes, params, plan, workspace,
      stream,
      [&params](const DecodeArgs& args) {
        return with_tile_maps(params, args, kBlockH, kBlockT);
      },
      part_start_steps(T::kShape));
}

template <int kBlockT, int kStages>
VariantHandles variant_handles() {
  return {.launch = &launch_variant<kBlockT, kStages>,
          .decode_kernel = reinterpret_cast<const void*>(&decode_kernel<kBlockT, kStages, false>),
          .balanced_kernel =
              reinterpret_cast<const void*>(&decode_kernel<kBlockT, kStages, true>)};
}

}  // namespace mlalab::kernels::wgmma

#define MLALAB_INSTANTIATE_WGMMA(block_t, stages)    \
  template mlalab::kernels::VariantHandles           \
  mlalab::kernels::wgmma::variant_handles<block_t, stages>();
