#pragma once
// The wgmma MLA decode kernel (sm_90a): Hopper's warpgroup MMA reads q and the KV tile
// straight from shared memory, so the tensor cores are fed without the ldmatrix traffic that
// bounds the portable family at H = 128. Two knobs, block_t (32 or 64) and stages; the CTA is
// always 64 heads, two MMA warpgroups and one copy warpgroup (traits.h).
//
// Per part of a CTA's work (its split, or each sequence whose steps its balanced share holds),
// a copy warpgroup loads the 64 query rows, then every block_t-token KV tile of the part into a
// ring of `stages` shared-memory stages (cp.async; mbarriers say when a tile has landed and when
// a stage is free again; the ring runs on across parts). For every tile, two MMA warpgroups:
//   1. S = Q·Kᵀ: warpgroup g computes the 64 × block_t/2 scores of its half of the tokens;
//   2. online softmax in registers: each warpgroup's row maxima meet in shared memory, both
//      warpgroups rescale with the same step maximum, P (bf16) goes to shared memory;
//   3. O += P·V: warpgroup g accumulates d_v columns [256·g, 256·g + 256) over all tokens,
//      A = P from registers (ldmatrix), B = the same KV tile read as V, transposed;
// finally each warpgroup's row sums meet in shared memory, and O is normalised and written
// (or the part's partial result).
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/decode_common.cuh"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/kernel.h"
#include "kernels/wgmma/primitives.cuh"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {

using portable::cp_async_16;
using portable::cp_async_commit;
using portable::cp_async_wait;
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

  static constexpr int kGroupTokens = kBlockT / kWarpGroups;  // N of the S = Q·Kᵀ MMA
  static constexpr int kScoreFloats = kGroupTokens / 2;       // its accumulators per thread
  static constexpr int kGroupColumns = kDv / kWarpGroups;     // d_v columns of O per group
  static constexpr int kPvN = 64;                             // N of one O += P·V MMA
  static constexpr int kPvTiles = kGroupColumns / kPvN;
  static constexpr int kPvKSteps = kBlockT / 16;
  static constexpr int kProbRow = prob_row_elems(kBlockT);
};

// How far (base 2) a step's maximum may pass the running one before the running one moves.
constexpr float kMaxGrowthLog2 = 8.0f;

constexpr int kKStepBytes = 16 * 2;  // 16 columns of d_qk: a quarter of a span
constexpr int kKStepsPerSpan = kSpanElems / 16;
// k-steps of S = Q·Kᵀ: 32 in V4 (d_qk 512), 36 in V3 (576); the family supports exactly these.
constexpr int kCommonKSteps = dims_of(Layout::kV4).d_qk / 16;
constexpr int kMaxKSteps = dims_of(Layout::kV3).d_qk / 16;
static_assert(kCommonKSteps <= kMaxKSteps);

// The copy warpgroup's share of a tile: copy warp w takes the 8-row groups w, w + 4, ...;
// in each, lane l copies row 8g + l % 8, chunks l / 8, l / 8 + 4, ... of it, so one
// instruction of a warp fills half of one 1,024-byte atom (8 rows × 4 units, each bank 4
// times: the fewest wavefronts). `sources[i]` is the lane's row of its i-th group (nullptr:
// masked, zero-filled); `any_global` is any mapped global address, which a masked copy names
// but never reads.
constexpr int kCopyWarps = kCopyThreads / 32;

template <int kRows>
constexpr int copy_groups_per_warp() {
  static_assert(kRows % (kCoreRows * kCopyWarps) == 0);
  return kRows / kCoreRows / kCopyWarps;
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
    const bf16* source = sources[i];
    const bool valid = source != nullptr;
    const std::uint32_t low = tile + row * kSpanBytes + (unit ^ row % kCoreRows) * kChunkBytes;
    const std::uint32_t high = low ^ (4 * kChunkBytes);  // unit + 4: bit 2 of the unit flips
#pragma unroll 3
    for (int span = 0; span < spans; ++span) {
      const int chunk = span * 8 + unit;
      const std::uint32_t offset = span * span_stride_bytes(kRows);
      cp_async_16(low + offset, valid ? source + chunk * kChunkElems : any_global, valid);
      cp_async_16(high + offset, valid ? source + (chunk + 4) * kChunkElems : any_global,
                  valid);
    }
  }
}

template <int kBlockT, int kStages, bool kBalanced>
__global__ void __launch_bounds__(kThreads, 1)
    decode_kernel(const __grid_constant__ DecodeArgs args) {
#ifdef MLALAB_WGMMA_AVAILABLE
  timeline_cta_started(args);
  using T = Traits<kBlockT, kStages>;
  const DecodeParams& p = args.params;
  // 1,024-byte aligned: every swizzle atom of the tiles starts on a 1,024-byte boundary.
  extern __shared__ __align__(1024) unsigned char smem_base[];
  const SmemPlan plan = plan_smem(T::kShape, p.d_qk);
  const std::uint32_t q_tile = smem_address(smem_base);
  const std::uint32_t kv_tiles = q_tile + plan.q_bytes;
  bf16* probs = reinterpret_cast<bf16*>(smem_base + plan.q_bytes + plan.kv_bytes);
  // [warpgroup][head row]: each group's half-step maxima, later its final row sums.
  float* row_stats = reinterpret_cast<float*>(smem_base + plan.q_bytes + plan.kv_bytes +
                                              plan.prob_bytes);
  // tile_landed[stage]: the 128 copy threads arrive when their copies land;
  // stage_free[stage]: the 8 MMA warps arrive when done reading the stage.
  const std::uint32_t tile_landed =
      q_tile + plan.q_bytes + plan.kv_bytes + plan.prob_bytes + plan.row_stat_bytes;
  const std::uint32_t stage_free = tile_landed + kStages * 8;
  // Balanced launches: the cursor of the MMA warpgroups (0) or of the copy warpgroup (1),
  // which follow the barriers. Found from stage_free where it is used, rather than kept as a
  // pointer that the register-bound loops would have to hold (ptxas spilled it).
  const auto cursor = [stage_free](int owner) -> PartsCursor& {
    return *static_cast<PartsCursor*>(
        __cvta_shared_to_generic(stage_free + kStages * 8 + owner * sizeof(PartsCursor)));
  };

  // A split CTA's one part, or a balanced worker's parts, which the copy warpgroup and the
  // MMA warpgroups walk apart, each through its cursor.
  using Parts = CtaParts<kBlockH, kBlockT, kThreads, kBalanced>;
  CtaWork work{};
  if constexpr (kBalanced) {
    const PartsCursor first = Parts::start(args, smem_base);
    if (threadIdx.x == 0) cursor(0) = cursor(1) = first;
  } else {
    work = Parts::split_part(args);
    if (work.steps <= 0) {
      write_empty_result<kBlockH, kThreads>(args, work);
      timeline_part_done(args, work);
      return;
    }
  }
  if (threadIdx.x == 0) {
    for (int stage = 0; stage < kStages; ++stage) {
      mbarrier_init(tile_landed + stage * 8, kCopyThreads);
      mbarrier_init(stage_free + stage * 8, kWarps);
    }
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;

  // ---- The copy warpgroup: per part, q, then every KV tile once its stage is free --------
  // `ring_tile` counts the tiles of every part so far: the ring's position and barrier phase.
  if (threadIdx.x >= kMmaThreads) {
    release_registers<kCopyRegisters>();
    int ring_tile = 0;
    const auto copy_part = [&] {
      // q is replaced once the MMA warps are done with the previous part's last tile.
      if (ring_tile > 0) {
        mbarrier_wait(stage_free + (ring_tile - 1) % kStages * 8, (ring_tile - 1) / kStages % 2);
      }
      constexpr int kQGroups = copy_groups_per_warp<kBlockH>();
      const bf16* q_sources[kQGroups];
#pragma unroll
      for (int i = 0; i < kQGroups; ++i) q_sources[i] = work.q_row(p, copy_row(i));
      copy_tile_async<kBlockH>(q_tile, p.d_qk, p.q, q_sources);  // lands with the first tile

      constexpr int kKvGroups = copy_groups_per_warp<kBlockT>();
      KvRowLookahead<kBlockT, kKvGroups> kv_rows(args, work, copy_row(0),
                                                 kCopyWarps * kCoreRows);
      for (int step = 0; step < work.steps; ++step, ++ring_tile) {
        const int stage = ring_tile % kStages;
        if (ring_tile >= kStages) {
          mbarrier_wait(stage_free + stage * 8, (ring_tile / kStages - 1) % 2);
        }
        const bf16* sources[kKvGroups];
        kv_rows.take(step, sources);
        copy_tile_async<kBlockT>(kv_tiles + stage * plan.kv_stage_bytes, p.d_qk, p.kv_cache,
                                 sources);
        mbarrier_arrive_on_copies(tile_landed + stage * 8);
      }
    };
    if constexpr (kBalanced) {
      const auto copy_barrier = [] { sync_copy_threads<kCopyThreads>(); };
      while (Parts::next(args, cursor(1), threadIdx.x == kMmaThreads, copy_barrier, work)) {
        copy_part();
      }
    } else {
      copy_part();
    }
    cp_async_wait<0>();
    allow_dependent_launch();
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
  // Q is the K-major A operand, K the K-major B operand (this group's token half), V the
  // MN-major B operand (this group's d_v columns) of the same tile.
  const int k_steps = p.d_qk / 16;

  int ring_tile = 0;  // as the copy warpgroup counts
  const auto mma_part = [&] {
    float out_acc[T::kPvTiles][32];
#pragma unroll
    for (int tile = 0; tile < T::kPvTiles; ++tile)
#pragma unroll
      for (int i = 0; i < 32; ++i) out_acc[tile][i] = 0.0f;
    float running_max[2] = {-INFINITY, -INFINITY};  // base-2 logits
    float running_sum[2] = {0.0f, 0.0f};            // over this thread's columns only

    for (int step = 0; step < work.steps; ++step, ++ring_tile) {
      // The tile has landed; cp.async wrote it through the generic proxy and the tensor cores
      // read it through the async proxy, hence the fence.
      const int stage = ring_tile % kStages;
      mbarrier_wait(tile_landed + stage * 8, ring_tile / kStages % 2);
      fence_async_proxy();
      const std::uint32_t kv_tile = kv_tiles + stage * plan.kv_stage_bytes;

      // ---- 1. S = Q·Kᵀ for this group's tokens -----------------------------------------
      // No zeroing: the first MMA overwrites.
      float scores[T::kScoreFloats];
      // q's address derived from this step's tile address, which ptxas keeps in a uniform
      // register: so are then the q descriptors. Taken from q_tile (loop-invariant), ptxas held
      // them in vector registers in the balanced kernel and moved them to uniform ones before
      // every MMA: 72 R2UR per step (docs/perf-notes.md, version 17).
      const std::uint64_t q_desc = matrix_descriptor(
          opaque(kv_tile) - stage * plan.kv_stage_bytes - plan.q_bytes, 16, kAtomBytes);
      const std::uint64_t k_desc =
          matrix_descriptor(kv_tile + warp_group * T::kGroupTokens * kSpanBytes, 16, kAtomBytes);
      // k-step k reads columns 16k..16k+15: span k / 4, a quarter of it in.
      auto score_mma = [&]<bool kAccumulate>(int k) {
        const int in_span = k % kKStepsPerSpan * kKStepBytes;
        const std::uint64_t a =
            advance(q_desc, k / kKStepsPerSpan * span_stride_bytes(kBlockH) + in_span);
        const std::uint64_t b =
            advance(k_desc, k / kKStepsPerSpan * span_stride_bytes(kBlockT) + in_span);
        if constexpr (T::kGroupTokens == 16) {
          mma_m64n16k16_ss<kAccumulate>(scores, a, b);
        } else {
          mma_m64n32k16_ss<kAccumulate>(scores, a, b);
        }
      };
      // The k-steps both layouts have, then V3's four more, each a straight run of MMAs: a
      // loop or branch inside one fence…commit span makes ptxas serialize the MMAs.
      fence_operands();
#pragma unroll
      for (int k = 0; k < kCommonKSteps; ++k) {
        if (k == 0) {
          score_mma.template operator()<false>(k);
        } else {
          score_mma.template operator()<true>(k);
        }
      }
      commit_group();
      if (k_steps > kCommonKSteps) {
        fence_operands();
#pragma unroll
        for (int k = kCommonKSteps; k < kMaxKSteps; ++k) score_mma.template operator()<true>(k);
        commit_group();
      }

      wait_group<0>();
      pin_registers(scores);

      // ---- 2. Online softmax ---------------------------------------------------------------
      const int valid_tokens = min(kBlockT, work.token_end - (work.token_begin + step * kBlockT));
      const int group_column0 = warp_group * T::kGroupTokens + column_in_block;
      float step_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int i = 0; i < T::kScoreFloats; ++i) {
        const int half = i / 2 % 2;
        const int column = group_column0 + i / 4 * 8 + i % 2;
        scores[i] = column < valid_tokens ? scores[i] * args.scale_log2 : -INFINITY;
        step_max[half] = fmaxf(step_max[half], scores[i]);
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        step_max[half] = fmaxf(step_max[half], __shfl_xor_sync(0xffffffffu, step_max[half], 1));
        step_max[half] = fmaxf(step_max[half], __shfl_xor_sync(0xffffffffu, step_max[half], 2));
        if (lane % 4 == 0) row_stats[warp_group * kBlockH + rows[half]] = step_max[half];
      }
      sync_mma_threads<kMmaThreads>();
      // The running maximum moves only when the step's passes it by more than
      // kMaxGrowthLog2, so that O, which must be rescaled whenever it moves, rarely is: once a
      // sequence's first steps have set it, a warp skips the 128 multiplications per thread
      // that rescaling O costs, on the path from S to P·V. P is then at most 2^kMaxGrowthLog2,
      // well inside bf16 and the fp32 sums.
      float rescale[2] = {1.0f, 1.0f};
      bool moved = false;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        // Every step has at least one valid token, so its maximum is finite, and the first
        // step (running_max −inf) always moves it.
        const float new_max = fmaxf(row_stats[rows[half]], row_stats[kBlockH + rows[half]]);
        if (new_max > running_max[half] + kMaxGrowthLog2) {
          rescale[half] = exp2f(running_max[half] - new_max);
          running_max[half] = new_max;
          running_sum[half] *= rescale[half];
          moved = true;
        }
      }
#pragma unroll
      for (int i = 0; i < T::kScoreFloats; i += 2) {
        const int half = i / 2 % 2;
        const float p0 = exp2f(scores[i] - running_max[half]);
        const float p1 = exp2f(scores[i + 1] - running_max[half]);
        running_sum[half] += p0 + p1;
        const int column = group_column0 + i / 4 * 8;
        *reinterpret_cast<std::uint32_t*>(probs + rows[half] * T::kProbRow + column) =
            pack_bf16x2(p0, p1);
      }
      if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
        for (int tile = 0; tile < T::kPvTiles; ++tile) {
#pragma unroll
          for (int i = 0; i < 32; ++i) out_acc[tile][i] *= rescale[i / 2 % 2];
        }
      }
      sync_mma_threads<kMmaThreads>();

      // ---- 3. O += P·V over this group's d_v columns ----------------------------------
      std::uint32_t p_frag[T::kPvKSteps][4];
#pragma unroll
      for (int kk = 0; kk < T::kPvKSteps; ++kk) {
        ldmatrix_x4(p_frag[kk],
                    smem_address(probs + (warp_in_group * 16 + lane % 16) * T::kProbRow +
                                 kk * 16 + lane / 16 * 8));
      }
      // V as the MN-major B: 64 columns per span (spans span_stride apart), 8 tokens per atom.
      const std::uint64_t v_desc = matrix_descriptor(
          kv_tile + warp_group * (T::kGroupColumns / kSpanElems) * span_stride_bytes(kBlockT),
          span_stride_bytes(kBlockT), kAtomBytes);
      fence_operands();
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
      commit_group();
      wait_group<0>();
#pragma unroll
      for (int tile = 0; tile < T::kPvTiles; ++tile) pin_registers(out_acc[tile]);
      __syncwarp();
      if (lane == 0) mbarrier_arrive(stage_free + stage * 8);
    }

    allow_dependent_launch();

    // ---- Epilogue: the two groups' row sums meet, normalise and write -------------------
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      running_sum[half] += __shfl_xor_sync(0xffffffffu, running_sum[half], 1);
      running_sum[half] += __shfl_xor_sync(0xffffffffu, running_sum[half], 2);
      if (lane % 4 == 0) row_stats[warp_group * kBlockH + rows[half]] = running_sum[half];
    }
    sync_mma_threads<kMmaThreads>();

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
          result.store(column0 + tile * T::kPvN + block * 8, out_acc[tile][block * 4 + half * 2],
                       out_acc[tile][block * 4 + half * 2 + 1]);
        }
      }
      if (warp_group == 0 && lane % 4 == 0) result.store_lse();
    }
  };
  if constexpr (kBalanced) {
    const auto mma_barrier = [] { sync_mma_threads<kMmaThreads>(); };
    while (Parts::next(args, cursor(0), threadIdx.x == 0, mma_barrier, work)) {
      mma_part();
      sync_mma_threads<kMmaThreads>();  // the next part's first step writes row_stats again
      timeline_part_done(args, work);
    }
  } else {
    mma_part();
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
                       decode_kernel<kBlockT, kStages, true>>(
      kBlockH, kThreads, plan_smem(T::kShape, params.d_qk).total_bytes, params, plan, workspace,
      stream);
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
