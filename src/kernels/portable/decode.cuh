#pragma once
// The portable MLA decode kernel: warp-level bf16 MMA fed by a cp.async multi-stage pipeline.
// One template, four compile-time knobs (heads per CTA, KV tokens per step, warps, stages);
// each instantiation is a registry variant. Which CTA does which work, and the launch, are
// shared with the other families (decode_common.cuh); split-KV partials go to combine.cu.
//
// Per part of a CTA's work (its split, or each sequence whose steps its balanced share holds):
// load the block_h query rows; then, for every block_t-token step of the part,
//   S = Q·Kᵀ (tensor cores) → online softmax (shared memory) → O += P·V (tensor cores),
// with the next stages-1 KV tiles already in flight; finally normalise O and write it (or
// the part's partial result).
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/decode_common.cuh"
#include "kernels/portable/kernel.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/portable/traits.h"

namespace mlalab::kernels::portable {

template <int kBlockH, int kBlockT, int kWarps, int kStages>
struct Traits {
  static constexpr VariantShape kShape{
      .block_h = kBlockH, .block_t = kBlockT, .warps = kWarps, .stages = kStages};
  static_assert(is_valid_shape(kShape), "variant outside the family's invariants (traits.h)");

  static constexpr int kThreads = kWarps * kWarpSize;
  static constexpr ScoreWarpLayout kScoreLayout = score_warp_layout(kShape);
  static constexpr int kWarpMTiles = kBlockH / kMmaM / kScoreLayout.warps_m;
  static constexpr int kWarpNTiles = kBlockT / kMmaN / kScoreLayout.warps_n;

  static constexpr int kMTiles = kBlockH / kMmaM;
  static constexpr int kDvTilesPerWarp = kDv / kWarps / kMmaN;
  static_assert(kDvTilesPerWarp % 2 == 0, "V fragments are loaded two n-tiles at a time");
  static constexpr int kPvKSteps = kBlockT / kMmaK;
  static_assert(kMTiles * kDvTilesPerWarp * 4 == output_accumulators_per_thread(kShape),
                "the O fragments are the accumulator budget traits.h plans for");

  // Softmax: each head row is owned by a group of adjacent lanes.
  static constexpr int kSoftmaxThreadsPerRow = kThreads / kBlockH;
  static constexpr int kSoftmaxColsPerThread = kBlockT / kSoftmaxThreadsPerRow;
  static_assert(kSoftmaxThreadsPerRow <= kWarpSize && kSoftmaxColsPerThread >= 1);

  static constexpr int kScoreRow = score_row_floats(kBlockT);
  static constexpr int kProbRow = prob_row_elems(kBlockT);
};

// Shared memory, carved in the order of plan_smem (traits.h).
template <typename T>
struct SmemLayout {
  bf16* q;            // [block_h][d_qk + pad]
  bf16* kv;           // [stages][block_t][d_qk + pad]
  float* scores;      // [warps_k][block_h][block_t + pad]: partial S of each k-slice of warps
  bf16* probs;        // [block_h][block_t + pad]: P of the current step
  float* row_rescale; // [block_h]: exp2(m_old − m_new) of the current step
  float* row_max;     // [block_h]: final running max (base 2)
  float* row_sum;     // [block_h]: final running sum

  __device__ SmemLayout(unsigned char* base, int d_qk) {
    const SmemPlan plan = plan_smem(T::kShape, d_qk);
    q = reinterpret_cast<bf16*>(base);
    kv = reinterpret_cast<bf16*>(base + plan.q_bytes);
    scores = reinterpret_cast<float*>(base + plan.q_bytes + plan.kv_bytes);
    probs = reinterpret_cast<bf16*>(base + plan.q_bytes + plan.kv_bytes + plan.score_bytes);
    row_rescale = reinterpret_cast<float*>(base + plan.q_bytes + plan.kv_bytes +
                                           plan.score_bytes + plan.prob_bytes);
    row_max = row_rescale + T::kShape.block_h;
    row_sum = row_max + T::kShape.block_h;
  }
};

// Copies `kRows` rows of d_qk bf16 into padded shared rows, 16 bytes per cp.async. A group of
// adjacent threads shares each row: thread t copies chunks of row copy_row<kThreads, kRows>(),
// from `source` (its global address, or nullptr for a masked row, which is zero-filled);
// `any_global` is any mapped global address, which a masked copy names but never reads.
template <int kThreads, int kRows>
__device__ __forceinline__ int copy_row() {
  static_assert(kThreads % kRows == 0);
  return threadIdx.x / (kThreads / kRows);
}

template <int kThreads, int kRows>
__device__ __forceinline__ void load_rows_async(bf16* smem_rows, int d_qk, const bf16* any_global,
                                                const bf16* source) {
  constexpr int kThreadsPerRow = kThreads / kRows;
  const int chunks = d_qk / kChunkElems;
  const bool valid = source != nullptr;
  const std::uint32_t destination =
      smem_address(smem_rows + copy_row<kThreads, kRows>() * padded_row_elems(d_qk));
  for (int chunk = threadIdx.x % kThreadsPerRow; chunk < chunks; chunk += kThreadsPerRow) {
    const bf16* chunk_source = valid ? source + chunk * kChunkElems : any_global;
    cp_async_16(destination + chunk * kChunkElems * sizeof(bf16), chunk_source, valid);
  }
}

// One part of the CTA's work (a token range of one sequence, decode_common.cuh), from loading
// its q rows to writing its result. The next part may start loading as soon as a thread
// returns: the epilogue's barrier follows every read of q and the KV stages, and the row
// statistics it still reads are written again only after the next part's step barriers.
template <typename T>
__device__ __forceinline__ void attend(const DecodeArgs& args, const CtaWork& work,
                                       const SmemLayout<T>& smem) {
  constexpr int kBlockH = T::kShape.block_h;
  constexpr int kBlockT = T::kShape.block_t;
  constexpr int kWarps = T::kShape.warps;
  constexpr int kStages = T::kShape.stages;
  const DecodeParams& p = args.params;
  const int row_elems = padded_row_elems(p.d_qk);
  const int token_end = work.token_end;
  const int steps = work.steps;
  const int token_begin = work.token_begin;
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;

  // ---- Pipeline prologue: q, then the first stages-1 KV tiles ---------------------------
  KvRowLookahead<kBlockT> kv_rows(args, work, copy_row<T::kThreads, kBlockT>());
  auto load_kv_step = [&](int step) {
    const bf16* source[1];
    kv_rows.take(step, source);
    if (step < steps) {
      load_rows_async<T::kThreads, kBlockT>(smem.kv + (step % kStages) * kBlockT * row_elems,
                                            p.d_qk, p.kv_cache, source[0]);
    }
    cp_async_commit();  // an empty group keeps the wait counts uniform at the tail
  };

  load_rows_async<T::kThreads, kBlockH>(smem.q, p.d_qk, p.q,
                                        work.q_row(p, copy_row<T::kThreads, kBlockH>()));
  for (int step = 0; step < kStages - 1; ++step) load_kv_step(step);

  // ---- Per-thread state ----------------------------------------------------------------
  // O accumulators: this warp's kDv / kWarps columns, all block_h rows.
  float out_acc[T::kMTiles][T::kDvTilesPerWarp][4];
#pragma unroll
  for (int m = 0; m < T::kMTiles; ++m)
#pragma unroll
    for (int n = 0; n < T::kDvTilesPerWarp; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) out_acc[m][n][i] = 0.0f;

  // Online-softmax state of the row this thread helps own (same value in the row's lanes).
  const int softmax_row = threadIdx.x / T::kSoftmaxThreadsPerRow;
  const int softmax_lane = threadIdx.x % T::kSoftmaxThreadsPerRow;
  float running_max = -INFINITY;  // base-2 logits
  float running_sum = 0.0f;

  // Where this warp sits in the S = Q·Kᵀ product.
  const int score_warp_m = warp % T::kScoreLayout.warps_m;
  const int score_warp_n = (warp / T::kScoreLayout.warps_m) % T::kScoreLayout.warps_n;
  const int score_warp_k = warp / (T::kScoreLayout.warps_m * T::kScoreLayout.warps_n);
  const int k_steps_per_warp = p.d_qk / kMmaK / T::kScoreLayout.warps_k;
  const int k_begin = score_warp_k * k_steps_per_warp * kMmaK;

  // ldmatrix lane addressing: A (row-major 16×16) takes rows lane%16, column half lane/16;
  // B from K rows (tokens) takes token lane%8, column half (lane/8)%2.
  const int a_row = lane % 16;
  const int a_col = (lane / 16) * 8;
  const int b_row = lane % 8;
  const int b_col = ((lane / 8) % 2) * 8;

  for (int step = 0; step < steps; ++step) {
    // Everyone is done with step-1 (its KV stage, scores and probs), so the stage it used
    // may be refilled with step + stages − 1 while this step's tile lands.
    __syncthreads();
    load_kv_step(step + kStages - 1);
    cp_async_wait<kStages - 1>();
    __syncthreads();
    const bf16* kv_tile = smem.kv + (step % kStages) * kBlockT * row_elems;

    // ---- S = Q·Kᵀ over this warp's slice of d_qk -------------------------------------
    float score_acc[T::kWarpMTiles][T::kWarpNTiles][4] = {};
#pragma unroll 2
    for (int k = k_begin; k < k_begin + k_steps_per_warp * kMmaK; k += kMmaK) {
      std::uint32_t a_frag[T::kWarpMTiles][4];
#pragma unroll
      for (int m = 0; m < T::kWarpMTiles; ++m) {
        const int row = (score_warp_m * T::kWarpMTiles + m) * kMmaM + a_row;
        ldmatrix_x4(a_frag[m], smem_address(smem.q + row * row_elems + k + a_col));
      }
#pragma unroll
      for (int n = 0; n < T::kWarpNTiles; ++n) {
        const int token = (score_warp_n * T::kWarpNTiles + n) * kMmaN + b_row;
        std::uint32_t b_frag[2];
        ldmatrix_x2(b_frag, smem_address(kv_tile + token * row_elems + k + b_col));
#pragma unroll
        for (int m = 0; m < T::kWarpMTiles; ++m) mma_bf16_16816(score_acc[m][n], a_frag[m], b_frag);
      }
    }
    // Partial scores to shared memory; the k-slices are summed by the softmax below.
    float* score_slice = smem.scores + score_warp_k * kBlockH * T::kScoreRow;
#pragma unroll
    for (int m = 0; m < T::kWarpMTiles; ++m) {
#pragma unroll
      for (int n = 0; n < T::kWarpNTiles; ++n) {
        const int row = (score_warp_m * T::kWarpMTiles + m) * kMmaM + lane / 4;
        const int col = (score_warp_n * T::kWarpNTiles + n) * kMmaN + (lane % 4) * 2;
        *reinterpret_cast<float2*>(score_slice + row * T::kScoreRow + col) =
            make_float2(score_acc[m][n][0], score_acc[m][n][1]);
        *reinterpret_cast<float2*>(score_slice + (row + 8) * T::kScoreRow + col) =
            make_float2(score_acc[m][n][2], score_acc[m][n][3]);
      }
    }
    __syncthreads();

    // ---- Online softmax, one head row per group of kSoftmaxThreadsPerRow lanes --------
    {
      const int valid_cols = min(kBlockT, token_end - (token_begin + step * kBlockT));
      float logits[T::kSoftmaxColsPerThread];
      float step_max = -INFINITY;
#pragma unroll
      for (int i = 0; i < T::kSoftmaxColsPerThread; ++i) {
        const int col = softmax_lane + i * T::kSoftmaxThreadsPerRow;
        float score = 0.0f;
#pragma unroll
        for (int slice = 0; slice < T::kScoreLayout.warps_k; ++slice) {
          score += smem.scores[(slice * kBlockH + softmax_row) * T::kScoreRow + col];
        }
        logits[i] = col < valid_cols ? score * args.scale_log2 : -INFINITY;
        step_max = fmaxf(step_max, logits[i]);
      }
#pragma unroll
      for (int offset = T::kSoftmaxThreadsPerRow / 2; offset > 0; offset /= 2) {
        step_max = fmaxf(step_max, __shfl_xor_sync(0xffffffffu, step_max, offset));
      }
      // Every step has at least one valid token, so new_max is finite. exp2f, not the wgmma
      // kernels' exp2_approx: that cost this kernel 1.1 % at concurrency 1 (V3, H = 16,
      // target_ctas:512) for +0.4 to +1.0 % from 16 on (docs/perf-notes.md, version 30).
      const float new_max = fmaxf(running_max, step_max);
      const float rescale = exp2f(running_max - new_max);
      float step_sum = 0.0f;
#pragma unroll
      for (int i = 0; i < T::kSoftmaxColsPerThread; ++i) {
        const int col = softmax_lane + i * T::kSoftmaxThreadsPerRow;
        const float prob = exp2f(logits[i] - new_max);
        step_sum += prob;
        const __nv_bfloat16_raw prob_bf16 = __float2bfloat16_rn(prob);
        smem.probs[softmax_row * T::kProbRow + col] = bf16{prob_bf16.x};
      }
#pragma unroll
      for (int offset = T::kSoftmaxThreadsPerRow / 2; offset > 0; offset /= 2) {
        step_sum += __shfl_xor_sync(0xffffffffu, step_sum, offset);
      }
      running_sum = running_sum * rescale + step_sum;
      running_max = new_max;
      if (softmax_lane == 0) smem.row_rescale[softmax_row] = rescale;
    }
    __syncthreads();

    // ---- O = O · rescale + P·V over this warp's d_v columns ---------------------------
#pragma unroll
    for (int m = 0; m < T::kMTiles; ++m) {
      const float rescale_low = smem.row_rescale[m * kMmaM + lane / 4];
      const float rescale_high = smem.row_rescale[m * kMmaM + lane / 4 + 8];
#pragma unroll
      for (int n = 0; n < T::kDvTilesPerWarp; ++n) {
        out_acc[m][n][0] *= rescale_low;
        out_acc[m][n][1] *= rescale_low;
        out_acc[m][n][2] *= rescale_high;
        out_acc[m][n][3] *= rescale_high;
      }
    }
    const int dv_begin = warp * T::kDvTilesPerWarp * kMmaN;
#pragma unroll
    for (int kk = 0; kk < T::kPvKSteps; ++kk) {
      std::uint32_t p_frag[T::kMTiles][4];
#pragma unroll
      for (int m = 0; m < T::kMTiles; ++m) {
        ldmatrix_x4(p_frag[m], smem_address(smem.probs + (m * kMmaM + a_row) * T::kProbRow +
                                            kk * kMmaK + a_col));
      }
#pragma unroll
      for (int n = 0; n < T::kDvTilesPerWarp; n += 2) {
        // Transposed load of V (tokens × d_v, row-major) as the col-major B operand: lanes
        // 0-7 / 8-15 address tokens 0-7 / 8-15 of column block n, lanes 16-31 block n+1.
        const int token = kk * kMmaK + (lane % 8) + ((lane / 8) % 2) * 8;
        const int column = dv_begin + (n + lane / 16) * kMmaN;
        std::uint32_t v_frag[4];
        ldmatrix_x4_trans(v_frag, smem_address(kv_tile + token * row_elems + column));
        const std::uint32_t v_low[2] = {v_frag[0], v_frag[1]};
        const std::uint32_t v_high[2] = {v_frag[2], v_frag[3]};
#pragma unroll
        for (int m = 0; m < T::kMTiles; ++m) {
          mma_bf16_16816(out_acc[m][n], p_frag[m], v_low);
          mma_bf16_16816(out_acc[m][n + 1], p_frag[m], v_high);
        }
      }
    }
  }

  allow_dependent_launch();

  // ---- Epilogue: normalise and write --------------------------------------------------
  if (softmax_lane == 0) {
    smem.row_max[softmax_row] = running_max;
    smem.row_sum[softmax_row] = running_sum;
  }
  __syncthreads();

#pragma unroll
  for (int m = 0; m < T::kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m * kMmaM + lane / 4 + half * 8;
      const int head = work.head0 + row;
      if (head >= p.num_heads) continue;
      const ResultRow result(args, work, head, smem.row_max[row], smem.row_sum[row]);
      const int col0 = warp * T::kDvTilesPerWarp * kMmaN + (lane % 4) * 2;
#pragma unroll
      for (int n = 0; n < T::kDvTilesPerWarp; ++n) {
        result.store(col0 + n * kMmaN, out_acc[m][n][half * 2], out_acc[m][n][half * 2 + 1]);
      }
      if (warp == 0 && lane % 4 == 0) result.store_lse();
    }
  }
}

template <int kBlockH, int kBlockT, int kWarps, int kStages, bool kBalanced>
__global__ void __launch_bounds__(kWarps * kWarpSize)
    decode_kernel(const __grid_constant__ DecodeArgs args) {
  timeline_cta_started(args);
  using T = Traits<kBlockH, kBlockT, kWarps, kStages>;
  extern __shared__ __align__(16) unsigned char smem_base[];
  const SmemLayout<T> smem(smem_base, args.params.d_qk);
  using Parts = CtaParts<kBlockH, kBlockT, T::kThreads, kBalanced>;
  if constexpr (kBalanced) {
    // The cursor is the plan's last region.
    PartsCursor& cursor = *reinterpret_cast<PartsCursor*>(
        smem_base + plan_smem(T::kShape, args.params.d_qk).total_bytes - sizeof(PartsCursor));
    const PartsCursor first = Parts::start(args, smem_base);
    if (threadIdx.x == 0) cursor = first;
    __syncthreads();
    const auto barrier = [] { __syncthreads(); };
    CtaWork work;
    while (Parts::next(args, cursor, threadIdx.x == 0, barrier, work)) {
      attend<T>(args, work, smem);
      timeline_part_done(args, work);
    }
  } else {
    const CtaWork work = Parts::split_part(args);
    if (work.steps <= 0) {
      write_empty_result<kBlockH, T::kThreads>(args, work);
      timeline_part_done(args, work);
      return;
    }
    attend<T>(args, work, smem);
    timeline_part_done(args, work);
  }
}

template <int kBlockH, int kBlockT, int kWarps, int kStages>
LaunchStatus launch_variant(const DecodeParams& params, const LaunchPlan& plan, void* workspace,
                            cudaStream_t stream) {
  using T = Traits<kBlockH, kBlockT, kWarps, kStages>;
  return launch_decode<decode_kernel<kBlockH, kBlockT, kWarps, kStages, false>,
                       decode_kernel<kBlockH, kBlockT, kWarps, kStages, true>>(
      kBlockH, T::kThreads, plan_smem(T::kShape, params.d_qk).total_bytes, params, plan,
      workspace, stream);
}

template <int kBlockH, int kBlockT, int kWarps, int kStages>
VariantHandles variant_handles() {
  return {.launch = &launch_variant<kBlockH, kBlockT, kWarps, kStages>,
          .decode_kernel = reinterpret_cast<const void*>(
              &decode_kernel<kBlockH, kBlockT, kWarps, kStages, false>),
          .balanced_kernel = reinterpret_cast<const void*>(
              &decode_kernel<kBlockH, kBlockT, kWarps, kStages, true>)};
}

}  // namespace mlalab::kernels::portable

#define MLALAB_INSTANTIATE_PORTABLE(block_h, block_t, warps, stages) \
  template mlalab::kernels::VariantHandles                           \
  mlalab::kernels::portable::variant_handles<block_h, block_t, warps, stages>();
