#pragma once
// What both wgmma kernels (decode.cuh, swapped.cuh) share around their MMAs: the kernel
// parameter with its tensor maps, the ring of KV stages in shared memory with the mbarriers
// that pace it, and the copy warpgroup that fills it. Per part of a CTA's work the copy
// warpgroup loads q, then every block_t-token KV tile of the part into the ring (a whole tile
// by TMA in two pieces where the pages hold whole tiles, else cp.async per 16 bytes); "landed"
// says when the MMA warps may read a piece of a stage, "free" when it may be refilled. The
// ring runs on across parts: `ring_tile` counts the tiles of every part so far, the ring's
// position and barrier phase, which the MMA warps count alike.
#include <cuda_runtime.h>

#include "kernels/decode_common.cuh"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/primitives.cuh"
#include "kernels/wgmma/tensor_maps.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {

// The copy warpgroup's share of a tile: copy warp w takes the 8-row groups w, w + 4, ...;
// in each, lane l copies row 8g + l % 8, chunks l / 8, l / 8 + 4, ... of it, so one
// instruction of a warp fills half of one 1,024-byte atom (8 rows × 4 units, each bank 4
// times: the fewest wavefronts). `sources[i]` is the lane's row of its i-th group (nullptr:
// masked, zero-filled); `any_global` is any mapped global address, which a masked copy names
// but never reads. A tile of fewer than 32 rows (the swapped kernel's 16 heads of q) leaves
// the last warps without a group.
constexpr int kCopyWarps = kCopyThreads / 32;

template <int kRows>
constexpr int copy_groups_per_warp() {
  static_assert(kRows % kCoreRows == 0);
  return (kRows / kCoreRows + kCopyWarps - 1) / kCopyWarps;
}

// Row of the tile that the calling copy lane handles in its i-th group.
__device__ __forceinline__ int copy_row(int i) {
  const int copy_warp = threadIdx.x / 32 % kCopyWarps;
  return (copy_warp + i * kCopyWarps) * kCoreRows + threadIdx.x % kCoreRows;
}

template <int kRows>
__device__ __forceinline__ void copy_tile_async(
    std::uint32_t tile, int d_qk, const bf16* any_global,
    const bf16* const (&sources)[copy_groups_per_warp<kRows>()]) {
  // In every span the lane copies units `unit` and `unit` + 4 of its row, swizzled.
  const int unit = threadIdx.x % 32 / kCoreRows;
  const int spans = d_qk / kSpanElems;
#pragma unroll
  for (int i = 0; i < copy_groups_per_warp<kRows>(); ++i) {
    const int row = copy_row(i);
    if constexpr (kRows % (kCoreRows * kCopyWarps) != 0) {
      if (row >= kRows) continue;
    }
    const bf16* source = sources[i];
    const bool valid = source != nullptr;
    const std::uint32_t low = tile + row * kSpanBytes + (unit ^ row % kCoreRows) * kChunkBytes;
    const std::uint32_t high = low ^ (4 * kChunkBytes);  // unit + 4: bit 2 of the unit flips
#pragma unroll 3
    for (int span = 0; span < spans; ++span) {
      const int chunk = span * 8 + unit;
      const std::uint32_t offset = span * span_stride_bytes(kRows);
      portable::cp_async_16(low + offset, valid ? source + chunk * kChunkElems : any_global,
                            valid);
      portable::cp_async_16(high + offset,
                            valid ? source + (chunk + 4) * kChunkElems : any_global, valid);
    }
  }
}

// The family's kernel parameter: DecodeArgs and, where the call allows them, the KV cache and
// q as tensor maps (tensor_maps.h): the cache's boxes kFirstPieceSpans spans of a KV tile, and
// one span in kv_span_map (the layout's kv_single_spans past them), q's its tile.
struct WgmmaArgs {
  CUtensorMap kv_tile_map;  // first: TMA wants the maps 64-byte aligned
  CUtensorMap kv_span_map;
  CUtensorMap q_tile_map;
  DecodeArgs decode;
  bool tiles_by_tma;  // false: every tile by cp.async
  bool q_by_tma;      // false: q by cp.async
};

// The kernel parameter of a launch: `args` and the maps of q (boxes of `block_h` heads) and of
// the cache (boxes of `block_t` tokens), where they can be encoded.
inline WgmmaArgs with_tile_maps(const DecodeParams& params, const DecodeArgs& args, int block_h,
                                int block_t) {
  WgmmaArgs kernel_args{.kv_tile_map = {}, .kv_span_map = {}, .q_tile_map = {}, .decode = args,
                        .tiles_by_tma = false, .q_by_tma = false};
  kernel_args.tiles_by_tma =
      encode_kv_tile_map(params, block_t, kFirstPieceSpans, &kernel_args.kv_tile_map) &&
      (kv_single_spans(params.d_qk / kSpanElems) == 0 ||
       encode_kv_tile_map(params, block_t, 1, &kernel_args.kv_span_map));
  kernel_args.q_by_tma = encode_q_tile_map(params, block_h, &kernel_args.q_tile_map);
  return kernel_args;
}

// Shared-memory addresses of q's tile, the ring's kStages stages and their barriers, from
// `barriers` on: tile_landed[stage] (a tile's first piece, traits.h: the 128 copy threads
// arrive when their cp.async copies land, a TMA tile's first piece and a part's q by TMA
// complete their bytes on it), rest_landed[stage] (the rest: the 128 copy threads arrive at
// once, a TMA tile's other boxes complete their bytes on it), stage_free[piece][stage] (the
// MMA warps that read the piece last arrive when done: group 0's for the first piece, group
// 1's for the rest), and after them a balanced launch's two cursors. A tile by cp.async is
// copied once both pieces are free and lands whole on tile_landed, so rest_landed means
// something only after it. (The copy threads all arrive on rest_landed, where the issuing
// thread alone would do: its branch made ptxas spill in the copy warpgroup's 40 registers.)
template <int kStages>
struct TileRing {
  std::uint32_t q_tile;
  std::uint32_t kv_tiles;
  std::uint32_t tile_landed;
  std::uint32_t rest_landed;
  std::uint32_t stage_free;
  int q_bytes;
  int kv_stage_bytes;

  __device__ TileRing(std::uint32_t q_tile, std::uint32_t kv_tiles, std::uint32_t barriers,
                      int q_bytes, int kv_stage_bytes)
      : q_tile(q_tile),
        kv_tiles(kv_tiles),
        tile_landed(barriers),
        rest_landed(barriers + kStages * 8),
        stage_free(barriers + 2 * kStages * 8),
        q_bytes(q_bytes),
        kv_stage_bytes(kv_stage_bytes) {}

  // The barrier that frees piece `piece` (0: the first, 1: the rest) of `stage`.
  __device__ std::uint32_t piece_free(int piece, int stage) const {
    return stage_free + (piece * kStages + stage) * 8;
  }

#ifdef MLALAB_WGMMA_AVAILABLE
  // By one thread, before the CTA's first barrier; `releasing_warps` MMA warps free a piece.
  __device__ void init_barriers(int releasing_warps) const {
    for (int stage = 0; stage < kStages; ++stage) {
      mbarrier_init(tile_landed + stage * 8, kCopyThreads);
      mbarrier_init(rest_landed + stage * 8, kCopyThreads);
      mbarrier_init(piece_free(0, stage), releasing_warps);
      mbarrier_init(piece_free(1, stage), releasing_warps);
    }
    // The TMA copies complete their bytes on the landed barriers through the async proxy.
    fence_async_proxy();
  }

  // The MMA warps' wait for the first piece of tile `ring_index` of the ring (and for all of
  // a tile by cp.async). Partial tiles (and q, where no tensor map could be encoded) come by
  // cp.async, through the generic proxy, and the tensor cores read through the async proxy,
  // hence the fence; it also orders those writes before the next TMA copy into the stage,
  // whose issuer does not fence.
  __device__ void wait_first_landed(int ring_index) const {
    mbarrier_wait(tile_landed + ring_index % kStages * 8, ring_index / kStages % 2);
    fence_async_proxy();
  }
  // The rest of the tile, after wait_first_landed (the async proxy's writes only: no fence).
  __device__ void wait_rest_landed(int ring_index) const {
    mbarrier_wait(rest_landed + ring_index % kStages * 8, ring_index / kStages % 2);
  }
#endif

  // Balanced launches: the cursor of the MMA warps (0) or of the copy warpgroup (1), which
  // follow the barriers. Found from stage_free where it is used, rather than kept as a pointer
  // that the register-bound loops would have to hold (ptxas spilled it).
  __device__ PartsCursor& cursor(int owner) const {
    return *static_cast<PartsCursor*>(
        __cvta_shared_to_generic(stage_free + 2 * kStages * 8 + owner * sizeof(PartsCursor)));
  }
};

#ifdef MLALAB_WGMMA_AVAILABLE
// The copy warpgroup (threads kMmaThreads .. kMmaThreads + 127) for a CTA whose q tile is
// kQRows heads and whose KV tiles are kBlockT tokens: a split CTA's one part (`work`), or a
// balanced worker's parts through `cursor`. Returns once every copy has been issued and this
// thread's cp.async copies have landed (the issuer's TMA copies may still be in flight: the
// MMA warps wait for them on tile_landed, and keep the CTA resident until then).
template <int kQRows, int kBlockT, int kStages, int kMmaThreads, typename Parts, bool kBalanced>
__device__ __forceinline__ void run_copy_warpgroup(const WgmmaArgs& kernel_args,
                                                   const TileRing<kStages>& ring,
                                                   CtaWork& work,
                                                   PartsCursor& cursor) {
  const DecodeArgs& args = kernel_args.decode;
  const DecodeParams& p = args.params;
  const bool tma_issuer = threadIdx.x == kMmaThreads;
  // Short parts (batch 1: a few tiles each) would otherwise wait for the maps' fetch.
  if (tma_issuer && kernel_args.tiles_by_tma) {
    prefetch_tensor_map(&kernel_args.kv_tile_map);
    if (kv_single_spans(p.d_qk / kSpanElems) > 0) prefetch_tensor_map(&kernel_args.kv_span_map);
  }
  if (tma_issuer && kernel_args.q_by_tma) prefetch_tensor_map(&kernel_args.q_tile_map);
  int ring_tile = 0;
  const auto copy_part = [&] {
    // q is replaced once both groups are done with the previous part's last tile. The wait
    // also puts q's bytes on the right phase of the first tile's barrier: that tile's
    // previous phase (ring_tile − kStages) completed before the MMA warps freed tile
    // ring_tile − 1.
    if (ring_tile > 0) {
      for (int piece = 0; piece < 2; ++piece) {
        mbarrier_wait(ring.piece_free(piece, (ring_tile - 1) % kStages),
                      (ring_tile - 1) / kStages % 2);
      }
    }
    // q lands with the part's first tile, on its barrier.
    if (kernel_args.q_by_tma) {
      if (tma_issuer) {
        const bool first_part = ring_tile == 0;  // its issue is recorded (kernels/timeline.h)
        if (first_part) timeline_cta_event(args, &CtaTimeline::q_issue_clock);
        const std::uint32_t first_tile_landed = ring.tile_landed + ring_tile % kStages * 8;
        mbarrier_expect_tx(first_tile_landed, ring.q_bytes);
        tma_load_4d(ring.q_tile, &kernel_args.q_tile_map, 0, work.head0, 0, work.batch,
                    first_tile_landed);
        if (first_part) timeline_cta_event(args, &CtaTimeline::q_issued_clock);
      }
    } else {
      constexpr int kQGroups = copy_groups_per_warp<kQRows>();
      const bf16* q_sources[kQGroups];
#pragma unroll
      for (int i = 0; i < kQGroups; ++i) q_sources[i] = work.q_row(p, copy_row(i));
      copy_tile_async<kQRows>(ring.q_tile, p.d_qk, p.q, q_sources);
    }

    constexpr int kKvGroups = copy_groups_per_warp<kBlockT>();
    KvRowLookahead<kBlockT, kKvGroups> kv_rows(args, work, copy_row(0), kCopyWarps * kCoreRows);
    // The one thread that issues the TMA copies reads each tile's page-table entry a tile
    // ahead, as kv_rows does for the cp.async rows.
    const int* const page_of_token =
        p.page_table + static_cast<std::int64_t>(work.batch) * p.page_table_stride;
    const auto tile_page = [&](int step) {
      const int token = work.token_begin + step * kBlockT;
      return token < work.token_end ? page_of_token[token >> args.page_shift] : -1;
    };
    int next_page = tma_issuer ? tile_page(0) : -1;
    for (int step = 0; step < work.steps; ++step, ++ring_tile) {
      const int stage = ring_tile % kStages;
      // Every copy thread waits for both pieces, the issuer as it needs them: threads that ran
      // ahead through TMA tiles would wait on a phase more than one ahead, which returns at
      // once (docs/perf-notes.md, version 42).
      const auto wait_free = [&](int piece) {
        if (ring_tile >= kStages) {
          mbarrier_wait(ring.piece_free(piece, stage), (ring_tile / kStages - 1) % 2);
        }
      };
      // The issuer records the tile's copy (kernels/timeline.h; nothing in a normal build).
      const auto copy_event = [&](std::uint32_t TimelineTile::*event) {
        if (tma_issuer) timeline_tile_event(args, ring_tile, event);
      };
      copy_event(&TimelineTile::free_wait);
      wait_free(0);
      copy_event(&TimelineTile::first_free);
      // The cp.async rows' addresses (and the lookahead's next page-table reads), once per step:
      // a TMA tile's after its first piece's issue, which is on the MMA warps' path.
      const bf16* sources[kKvGroups];
      const std::uint32_t tile = ring.kv_tiles + stage * ring.kv_stage_bytes;
      const int tile_token = work.token_begin + step * kBlockT;
      // A whole tile lies in one page (the map exists only where pages are at least a tile
      // and tiles start at multiples of block_t): TMA boxes. A part's last, partial tile goes
      // by cp.async, which zero-fills the rows past the sequence's end (a page's stale rows
      // could hold NaN, and P·V multiplies them by a zero probability).
      if (kernel_args.tiles_by_tma && tile_token + kBlockT <= work.token_end) {
        // A page out of range (the launch does not read the page table; the host-side checks
        // refuse one) reads nothing: its boxes lie outside the map and land as zeros, their
        // bytes still counted.
        const bool page_valid =
            static_cast<unsigned>(next_page) < static_cast<unsigned>(p.num_pages);
        const int page = page_valid ? next_page : p.num_pages;
        const int page_row = tile_token & ((1 << args.page_shift) - 1);
        // No proxy fence before the copies, though the stage's last writer may have been
        // cp.async (the generic proxy): the MMA threads that waited for that tile fenced then
        // (after their wait for it), and a piece is free only after their arrival, so a fence
        // lies on the path from those writes to these (PTX memory model).
        const auto copy_piece = [&](int first_span, int end_span, std::uint32_t landed) {
          mbarrier_expect_tx(landed, (end_span - first_span) * span_stride_bytes(kBlockT));
          int span = first_span;
          for (; span + kFirstPieceSpans <= end_span; span += kFirstPieceSpans) {
            tma_load_4d(tile + span * span_stride_bytes(kBlockT), &kernel_args.kv_tile_map, 0,
                        page_row, span, page, landed);
          }
          for (; span < end_span; ++span) {
            tma_load_4d(tile + span * span_stride_bytes(kBlockT), &kernel_args.kv_span_map, 0,
                        page_row, span, page, landed);
          }
        };
        // Each thread's arrival on tile_landed counts its cp.async copies since its last one
        // (q's, with a part's first tile, where q goes by cp.async); the issuer's expect_tx
        // precedes its arrival, so the phase cannot complete before the piece's bytes land.
        if (tma_issuer) copy_piece(0, kFirstPieceSpans, ring.tile_landed + stage * 8);
        copy_event(&TimelineTile::first_issued);
        mbarrier_arrive_on_copies(ring.tile_landed + stage * 8);
        kv_rows.take(step, sources);
        wait_free(1);
        copy_event(&TimelineTile::rest_free);
        if (tma_issuer) {
          copy_piece(kFirstPieceSpans, p.d_qk / kSpanElems, ring.rest_landed + stage * 8);
          next_page = tile_page(step + 1);  // the next tile's, read a tile ahead
        }
        copy_event(&TimelineTile::rest_issued);
      } else {
        kv_rows.take(step, sources);
        wait_free(1);
        copy_event(&TimelineTile::rest_free);
        copy_tile_async<kBlockT>(tile, p.d_qk, p.kv_cache, sources);
        copy_event(&TimelineTile::first_issued);
        copy_event(&TimelineTile::rest_issued);
        mbarrier_arrive_on_copies(ring.tile_landed + stage * 8);
      }
      // At once: a tile by cp.async has landed whole on tile_landed.
      mbarrier_arrive(ring.rest_landed + stage * 8);
    }
  };
  if constexpr (kBalanced) {
    const auto copy_barrier = [] { sync_copy_threads<kCopyThreads>(); };
    while (Parts::next(args, cursor, tma_issuer, copy_barrier, work)) copy_part();
  } else {
    copy_part();
  }
  if (tma_issuer) timeline_ring_tiles(args, ring_tile);
  portable::cp_async_wait<0>();
}
#endif  // MLALAB_WGMMA_AVAILABLE

}  // namespace mlalab::kernels::wgmma
