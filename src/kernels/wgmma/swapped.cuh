#pragma once
// The wgmma family's swapped kernel (sm_90a), for up to 16 heads per CTA. The other kernel
// (decode.cuh) puts the heads in the M of its MMAs, 64 rows, so at H = 16 its tensor cores do
// four times the work the heads need, and a CTA takes ~0.85 µs per 32-token tile whatever the
// batch: the H = 16 bandwidth targets sat at that cap (docs/perf-notes.md, "Issue 12 at H = 16:
// the swapped-operand plan"). Here the tokens are M and the heads N:
//
// Per part of a CTA's work (decode_common.cuh maps the grid to parts as for every kernel), a
// copy warpgroup loads the 16 query rows, then every 64-token KV tile into a ring of `stages`
// shared-memory stages (tile_copies.cuh), and one MMA warpgroup, for every tile:
//   1. Sᵀ = K·Qᵀ: 64 tokens × 16 heads, m64n16k16 over d_qk, A = the tile (K-major), B = q;
//   2. online softmax down Sᵀ's columns: each head's maximum over the tile's tokens (a warp's 16
//      by shuffles, the 4 warps' through shared memory), then Pᵀ (bf16) into shared memory,
//      16 heads × 64 tokens K-major: the B operand of
//   3. Oᵀ += Vᵀ·Pᵀ: 512 d_v columns × 16 heads, 8 m64n16k16 tiles per 16 tokens, A = the same
//      tile read as V, MN-major (the MMA's transposed A).
// Finally each head's row sum meets across the warps, and O is normalised and written (or the
// part's partial result).
//
// A tile lands in two pieces (tile_copies.cuh). By default Sᵀ starts on the first while the
// rest lands, and each piece is freed after its own P·V group, so the next tile's copy starts
// sooner. The _whole variants (kWholeTiles) wait for the whole tile and free it whole: a CTA
// then asks for its bytes later, which wins where HBM is saturated and CTAs that share a TPC
// would otherwise fall behind those alone on theirs (docs/perf-notes.md, versions 58-59).
//
// In every accumulator (Sᵀ, and each of Oᵀ's 8 tiles) thread `lane` of warp w holds rows
// 16w + lane / 4 and 16w + lane / 4 + 8 (tokens, or d_v columns) and the 4 columns (heads)
// 2·(lane % 4) + {0, 1} + {0, 8}: accumulator i is row half i / 2 % 2 and head slot
// head_slot(i) below.
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/decode_common.cuh"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/kernel.h"
#include "kernels/wgmma/primitives.cuh"
#include "kernels/wgmma/tile_copies.cuh"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {

template <int kStages, bool kWholeTiles>
struct SwappedTraits {
  static constexpr VariantShape kShape{.family = KernelFamily::kWgmma,
                                       .block_h = kSwappedBlockH,
                                       .block_t = kSwappedBlockT,
                                       .warps = kSwappedWarps,
                                       .stages = kStages,
                                       .whole_tiles = kWholeTiles};
  static_assert(is_valid_shape(kShape), "variant outside the family's invariants (traits.h)");
  static constexpr int kBlockH = kSwappedBlockH;  // heads: the N of every MMA
  static constexpr int kBlockT = kSwappedBlockT;  // tokens: the M of Sᵀ, the K of Oᵀ
  static constexpr int kMmaThreads = 32 * kSwappedWarps;
  static constexpr int kThreads = threads_of(kShape);
  static constexpr int kOutTiles = kDv / kSpanElems;  // Oᵀ's m64 tiles: one per span of V
  static constexpr int kPvKSteps = kBlockT / 16;
  static constexpr int kHeadSlots = 4;  // heads per thread in every accumulator
  // Every tile (q, the stages, Pᵀ) starts on a 1,024-byte boundary, in both layouts.
  static_assert(plan_smem(kShape, dims_of(Layout::kV3).d_qk).q_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV4).d_qk).q_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV3).d_qk).kv_stage_bytes % kAtomBytes == 0 &&
                plan_smem(kShape, dims_of(Layout::kV4).d_qk).kv_stage_bytes % kAtomBytes == 0);
  // Pᵀ is one span of the swizzled layout: 64 tokens of 2 bytes per head row.
  static_assert(kBlockT * 2 == kSpanBytes && kBlockH % kCoreRows == 0);
};

// Head slot (0..3) of accumulator i; the head itself is swapped_head(slot, lane).
__device__ __forceinline__ constexpr int head_slot(int i) { return 2 * (i / 4) + i % 2; }
__device__ __forceinline__ int swapped_head(int slot, int lane) {
  return 8 * (slot / 2) + 2 * (lane % 4) + slot % 2;
}

template <int kStages, bool kWholeTiles, bool kBalanced>
__global__ void __launch_bounds__(SwappedTraits<kStages, kWholeTiles>::kThreads, 1)
    swapped_decode_kernel(const __grid_constant__ WgmmaArgs kernel_args) {
#ifdef MLALAB_WGMMA_AVAILABLE
  wait_for_prior_grid();  // a dependent launch (grid_dependency.cuh)
  const DecodeArgs& args = kernel_args.decode;
  timeline_cta_started(args, kStages, /*mma_events=*/true);
  using T = SwappedTraits<kStages, kWholeTiles>;
  const DecodeParams& p = args.params;
  // 1,024-byte aligned: every swizzle atom of the tiles starts on a 1,024-byte boundary.
  extern __shared__ __align__(1024) unsigned char smem_base[];
  const SmemPlan plan = plan_smem(T::kShape, p.d_qk);
  const std::uint32_t q_tile = portable::smem_address(smem_base);
  const std::uint32_t kv_tiles = q_tile + plan.q_bytes;
  const std::uint32_t probs = kv_tiles + plan.kv_bytes;  // Pᵀ
  // [MMA warp][head]: each warp's maxima of the tile, later its row sums.
  float* head_stats =
      reinterpret_cast<float*>(smem_base + plan.q_bytes + plan.kv_bytes + plan.prob_bytes);
  const TileRing<kStages> ring(q_tile, kv_tiles, probs + plan.prob_bytes + plan.row_stat_bytes,
                               plan.q_bytes, plan.kv_stage_bytes);

  using Parts = CtaParts<T::kBlockH, T::kBlockT, T::kThreads, kBalanced>;
  CtaWork work{};
  if constexpr (kBalanced) {
    const PartsCursor first = Parts::start(args, smem_base);
    if (threadIdx.x == 0) ring.cursor(0) = ring.cursor(1) = first;
  } else {
    work = Parts::split_part(args);
    if (work.steps <= 0) {
      write_empty_result<T::kBlockH, T::kThreads>(args, work);
      timeline_part_done(args, work);
      return;
    }
  }
  if (threadIdx.x == 0) {
    timeline_cta_event(args, &CtaTimeline::work_known_clock);
    ring.init_barriers(kSwappedWarps);
  }
  __syncthreads();

  if (threadIdx.x >= T::kMmaThreads) {
    run_copy_warpgroup<T::kBlockH, T::kBlockT, kStages, T::kMmaThreads, Parts, kBalanced>(
        kernel_args, ring, work, ring.cursor(1));
    allow_dependent_launch();
    return;
  }

  // ---- The MMA warpgroup -------------------------------------------------------------------
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // This thread's rows of Sᵀ: tile tokens `token0` and `token0` + 8.
  const int token0 = 16 * warp + lane / 4;
  const int k_steps = p.d_qk / 16;
  int ring_tile = 0;  // as the copy warpgroup counts
  const auto sync_mma_warps = [] { sync_mma_threads<T::kMmaThreads>(); };
  // Pᵀ[head][token] in the swizzled layout (traits.h): head rows 128 bytes apart, the 16-byte
  // unit of token t at t / 8 ^ head % 8.
  const auto prob_offset = [](int head, int token) {
    return head * kSpanBytes + ((token / kCoreRows) ^ (head % kCoreRows)) * kChunkBytes +
           token % kCoreRows * 2;
  };

  const auto part = [&] {
    float out_acc[T::kOutTiles][8];
    zero_accumulators(out_acc);
    float running_max[T::kHeadSlots];  // base-2 logits, scaled
    float running_sum[T::kHeadSlots];  // over this thread's tokens only
#pragma unroll
    for (int slot = 0; slot < T::kHeadSlots; ++slot) {
      running_max[slot] = -INFINITY;
      running_sum[slot] = 0.0f;
    }

    // Warp 0 records the tile events (kernels/timeline.h; nothing in a normal build).
    const auto mma_event = [&](std::uint32_t TimelineTile::*event) {
      if (warp == 0 && lane == 0) timeline_tile_event(args, ring_tile, event);
    };
    for (int step = 0; step < work.steps; ++step, ++ring_tile) {
      mma_event(&TimelineTile::landed_wait);
      ring.wait_first_landed(ring_tile);
      mma_event(&TimelineTile::first_landed);
      if constexpr (kWholeTiles) {
        ring.wait_rest_landed(ring_tile);
        mma_event(&TimelineTile::rest_landed);
      }
      // The stage as a broadcast: ptxas then knows it is warp-uniform, and every descriptor
      // derived from it (the tile's, q's and Pᵀ's, all as offsets from the tile) is computed
      // in uniform registers. From the loop counter directly, they were computed per MMA in
      // vector registers and moved over: 295 R2UR per kernel, 18 now, a single CTA's tile
      // 1.65 → 1.35 µs (docs/perf-notes.md, version 29).
      const int stage = __shfl_sync(0xffffffffu, ring_tile % kStages, 0);
      const std::uint32_t kv_tile = kv_tiles + stage * plan.kv_stage_bytes;

      // ---- 1. Sᵀ = K·Qᵀ ------------------------------------------------------------------
      float scores[8];  // no zeroing: the first MMA overwrites
      const std::uint64_t k_desc = matrix_descriptor(kv_tile, 16, kAtomBytes);
      // q's address from the tile's (a loop-invariant q descriptor stays in vector registers).
      // Not through opaque() as in decode.cuh: here that put it in vector registers again. A
      // compiler that folds these offsets back to the loop-invariant addresses would bring the
      // R2URs back: count them in the SASS (nvdisasm) after a toolkit update.
      const std::uint64_t q_desc = matrix_descriptor(
          kv_tile - stage * plan.kv_stage_bytes - plan.q_bytes, 16, kAtomBytes);
      // k-step k reads columns 16k..16k+15: span k / 4, a quarter of it in.
      const auto score_mma = [&]<bool kAccumulate>(int k) {
        const int in_span = k % kKStepsPerSpan * kKStepBytes;
        mma_m64n16k16_ss<kAccumulate>(
            scores, advance(k_desc, k / kKStepsPerSpan * span_stride_bytes(T::kBlockT) + in_span),
            advance(q_desc, k / kKStepsPerSpan * span_stride_bytes(T::kBlockH) + in_span));
      };
      // In pieces, the first piece's k-steps go while the rest still lands (the other
      // kernel's version 43), then the rest's that both layouts have, then V3's four more.
      // Each run of MMAs is straight code in its own fence…commit span: a loop or branch
      // inside one (the rest's wait, V3's test) makes ptxas serialize the MMAs. The first
      // overwrites the accumulators.
      constexpr int kFirstKSteps = kFirstPieceSpans * kKStepsPerSpan;
      static_assert(kFirstKSteps < kCommonKSteps);
      fence_operands();
#pragma unroll
      for (int k = 0; k < kFirstKSteps; ++k) {
        if (k == 0) {
          score_mma.template operator()<false>(k);
        } else {
          score_mma.template operator()<true>(k);
        }
      }
      if constexpr (!kWholeTiles) {
        commit_group();
        ring.wait_rest_landed(ring_tile);
        mma_event(&TimelineTile::rest_landed);
        fence_operands();
      }
#pragma unroll
      for (int k = kFirstKSteps; k < kCommonKSteps; ++k) score_mma.template operator()<true>(k);
      commit_group();
      if (k_steps > kCommonKSteps) {
        fence_operands();
#pragma unroll
        for (int k = kCommonKSteps; k < kMaxKSteps; ++k) score_mma.template operator()<true>(k);
        commit_group();
      }
      wait_group<0>();
      pin_registers(scores);

      // ---- 2. Online softmax over the tile's tokens, per head -----------------------------
      const int valid_tokens =
          min(T::kBlockT, work.token_end - (work.token_begin + step * T::kBlockT));
      float tile_max[T::kHeadSlots];  // unscaled: the scale is positive
#pragma unroll
      for (int slot = 0; slot < T::kHeadSlots; ++slot) tile_max[slot] = -INFINITY;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        if (token0 + i / 2 % 2 * 8 >= valid_tokens) scores[i] = -INFINITY;
        tile_max[head_slot(i)] = fmaxf(tile_max[head_slot(i)], scores[i]);
      }
#pragma unroll
      for (int slot = 0; slot < T::kHeadSlots; ++slot) {
        // Lanes with one lane % 4 hold the same heads: the warp's 16 tokens.
#pragma unroll
        for (int mask = 4; mask < 32; mask *= 2) {
          tile_max[slot] = fmaxf(tile_max[slot], __shfl_xor_sync(0xffffffffu, tile_max[slot], mask));
        }
        if (lane < 4) head_stats[warp * T::kBlockH + swapped_head(slot, lane)] = tile_max[slot];
      }
      sync_mma_warps();
      // The running maximum moves only when the tile's passes it by more than
      // kMaxGrowthLog2 (as in decode.cuh): Oᵀ, rescaled whenever it moves, rarely is. Every
      // tile has a valid token, so the maximum is finite, and the first tile always moves it.
      float factor[T::kHeadSlots];
      bool moved = false;
#pragma unroll
      for (int slot = 0; slot < T::kHeadSlots; ++slot) {
        const int head = swapped_head(slot, lane);
        float candidate = head_stats[head];
#pragma unroll
        for (int w = 1; w < kSwappedWarps; ++w) {
          candidate = fmaxf(candidate, head_stats[w * T::kBlockH + head]);
        }
        candidate *= args.scale_log2;
        factor[slot] = 1.0f;
        if (candidate > running_max[slot] + kMaxGrowthLog2) {
          factor[slot] = exp2_approx(running_max[slot] - candidate);
          running_max[slot] = candidate;
          running_sum[slot] *= factor[slot];
          moved = true;
        }
      }
      // Pᵀ, scaled inside the exponent's FMA; made visible to the tensor cores (the async
      // proxy) before the barrier that lets the MMAs read it.
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int slot = head_slot(i);
        const float prob = exp2_approx(fmaf(scores[i], args.scale_log2, -running_max[slot]));
        running_sum[slot] += prob;
        *reinterpret_cast<__nv_bfloat16*>(
            smem_base + (probs - q_tile) +
            prob_offset(swapped_head(slot, lane), token0 + i / 2 % 2 * 8)) =
            __float2bfloat16_rn(prob);
      }
      fence_async_proxy();
      if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
        for (int tile = 0; tile < T::kOutTiles; ++tile)
#pragma unroll
          for (int i = 0; i < 8; ++i) out_acc[tile][i] *= factor[head_slot(i)];
      }
      sync_mma_warps();

      // ---- 3. Oᵀ += Vᵀ·Pᵀ ------------------------------------------------------------------
      // A: span `tile` of V, 16 tokens per k-step (two 8-token atoms), MN-major; B: Pᵀ's 16
      // tokens of the k-step, K-major.
      const std::uint64_t v_desc =
          matrix_descriptor(kv_tile, span_stride_bytes(T::kBlockT), kAtomBytes);
      const std::uint64_t p_desc = matrix_descriptor(
          kv_tile + (kStages - stage) * plan.kv_stage_bytes, 16, kAtomBytes);  // = probs
      // In pieces, Oᵀ's tiles over V's first piece (its spans: d_v columns 0-255) are one MMA
      // group and the rest another, so the first piece is freed for the next tile's copy while
      // the rest's MMAs run (the other kernel's version 44).
      const auto pv_mmas = [&](int first_out_tile, int end_out_tile) {
#pragma unroll
        for (int kk = 0; kk < T::kPvKSteps; ++kk) {
#pragma unroll
          for (int tile = first_out_tile; tile < end_out_tile; ++tile) {
            mma_m64n16k16_ss<true, true>(
                out_acc[tile],
                advance(v_desc, tile * span_stride_bytes(T::kBlockT) + kk * 2 * kAtomBytes),
                advance(p_desc, kk * kKStepBytes));
          }
        }
        commit_group();
      };
      fence_operands();
      if constexpr (kWholeTiles) {
        pv_mmas(0, T::kOutTiles);
      } else {
        pv_mmas(0, kFirstPieceSpans);
        pv_mmas(kFirstPieceSpans, T::kOutTiles);
        // The rope span (V3), in the rest, is read by Sᵀ alone, done by now. Each free is
        // recorded before its arrival: after it, the copy issuer could see the free first.
        wait_group<1>();
        __syncwarp();
        mma_event(&TimelineTile::first_freed);
        if (lane == 0) mbarrier_arrive(ring.piece_free(0, stage));
      }
      wait_group<0>();
#pragma unroll
      for (int tile = 0; tile < T::kOutTiles; ++tile) pin_registers(out_acc[tile]);
      __syncwarp();
      if constexpr (kWholeTiles) mma_event(&TimelineTile::first_freed);
      mma_event(&TimelineTile::rest_freed);
      if (lane == 0) {
        if constexpr (kWholeTiles) mbarrier_arrive(ring.piece_free(0, stage));
        mbarrier_arrive(ring.piece_free(1, stage));
      }
    }

    // ---- Epilogue: the warps' row sums meet, normalise and write ----------------------------
    allow_dependent_launch();
#pragma unroll
    for (int slot = 0; slot < T::kHeadSlots; ++slot) {
#pragma unroll
      for (int mask = 4; mask < 32; mask *= 2) {
        running_sum[slot] += __shfl_xor_sync(0xffffffffu, running_sum[slot], mask);
      }
      if (lane < 4) head_stats[warp * T::kBlockH + swapped_head(slot, lane)] = running_sum[slot];
    }
    sync_mma_warps();
    // Lanes lane and lane ^ 4 hold adjacent d_v columns of the same heads: they trade so that
    // each holds one head's two columns (even lane / 4: slot 2·hb, odd: 2·hb + 1), stored as
    // a pair.
    const int odd = lane / 4 % 2;
#pragma unroll
    for (int hb = 0; hb < 2; ++hb) {
      const int slot = 2 * hb + odd;
      const int head = swapped_head(slot, lane);
      float row_sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kSwappedWarps; ++w) row_sum += head_stats[w * T::kBlockH + head];
      const float row_max = odd ? running_max[2 * hb + 1] : running_max[2 * hb];
      const bool stores = work.head0 + head < p.num_heads;
      const ResultRow result(args, work, min(work.head0 + head, p.num_heads - 1), row_max,
                             row_sum);
#pragma unroll
      for (int tile = 0; tile < T::kOutTiles; ++tile) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float even_head = out_acc[tile][4 * hb + 2 * half];
          const float odd_head = out_acc[tile][4 * hb + 2 * half + 1];
          const float received = __shfl_xor_sync(0xffffffffu, odd ? even_head : odd_head, 4);
          const int column = kSpanElems * tile + 16 * warp + lane / 4 + 8 * half - odd;
          if (stores) {
            result.store(column, odd ? received : even_head, odd ? odd_head : received);
          }
        }
      }
      if (stores && warp == 0 && lane < 8) result.store_lse();
    }
  };

  if constexpr (kBalanced) {
    while (Parts::next(args, ring.cursor(0), threadIdx.x == 0, sync_mma_warps, work)) {
      part();
      sync_mma_warps();  // the next part's first tile writes head_stats again
      timeline_part_done(args, work);
    }
  } else {
    part();
    timeline_part_done(args, work);
  }
#else
  // Compiled for an architecture without wgmma: the launch refuses such a device before
  // this could run (launch_swapped_variant below).
  __trap();
#endif
}

template <int kStages, bool kWholeTiles>
LaunchStatus launch_swapped_variant(const DecodeParams& params, const LaunchPlan& plan,
                                    void* workspace, cudaStream_t stream) {
  if (!device_is_sm90a()) {
    return {.error = cudaErrorNoKernelImageForDevice, .refusal = LaunchRefusal::kCannotRunHere};
  }
  using T = SwappedTraits<kStages, kWholeTiles>;
  return launch_decode<swapped_decode_kernel<kStages, kWholeTiles, false>,
                       swapped_decode_kernel<kStages, kWholeTiles, true>, LaunchOrder::kDependent>(
      T::kBlockH, T::kThreads, plan_smem(T::kShape, params.d_qk).total_bytes, params, plan,
      workspace, stream, [&params](const DecodeArgs& args) {
        return with_tile_maps(params, args, T::kBlockH, T::kBlockT);
      });
}

template <int kStages, bool kWholeTiles>
VariantHandles swapped_variant_handles() {
  return {.launch = &launch_swapped_variant<kStages, kWholeTiles>,
          .decode_kernel =
              reinterpret_cast<const void*>(&swapped_decode_kernel<kStages, kWholeTiles, false>),
          .balanced_kernel =
              reinterpret_cast<const void*>(&swapped_decode_kernel<kStages, kWholeTiles, true>)};
}

}  // namespace mlalab::kernels::wgmma

#define MLALAB_INSTANTIATE_WGMMA_SWAPPED(stages, whole_tiles) \
  template mlalab::kernels::VariantHandles                    \
  mlalab::kernels::wgmma::swapped_variant_handles<stages, whole_tiles>();
