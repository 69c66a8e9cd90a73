// Combine: merges the partial results of every (batch entry, head), the num_splits splits of
// a split launch or the parts of a balanced launch's sequence (balanced_partition.h).
//   Each partial s holds out_s = Σ_{j∈s} e^{x_j} V_j / Σ_{j∈s} e^{x_j} and lse_s = ln Σ_{j∈s} e^{x_j}.
//   With M = max_s lse_s and w_s = e^{lse_s − M}:
//     lse = M + ln Σ_s w_s,   out = Σ_s w_s · out_s / (Σ_s w_s + e^{sink − M}).
//   Splits without tokens have lse_s = −inf and weight 0; their out_s is never written, so
//   it is loaded (unconditional loads batch better) but kept out of the sum.
//
// A row is one (batch entry, head): batch · num_heads + head. The kernels are latency-bound
// (a few KB per row), so every step that waits on memory reads all it needs at once: the
// lanes read the splits' lse together, and each thread's partial-result loads are unrolled
// several splits deep.
//
// Two kernels. combine_kernel: a CTA per row (or four per row when rows are few), a thread per
// four columns, the splits' weights shared through shared memory; it serves split launches,
// whose rows have up to kMaxSplits splits. combine_rows_kernel: a warp per row, eight rows per
// CTA, for balanced launches with many rows, whose sequences have few parts (two or three at
// H = 128, B = 64; a warp walks a long sequence's many parts in turn): an eighth of the CTAs,
// so a CTA's launch and exit no longer dominate a combine that merges little (8,192 CTAs of
// combine_kernel took 7 µs even when every one returned at once, docs/perf-notes.md, version
// 19), and each lane keeps two parts × four float4 loads in flight.
#include <cuda_runtime.h>

#include <cmath>

#include "core/layout.h"
#include "kernels/device.h"
#include "kernels/grid_dependency.cuh"
#include "kernels/launch.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/portable/traits.h"

namespace mlalab::kernels {
namespace {

using portable::kWarpSize;
using portable::pack_bf16x2;

constexpr int kCombineThreads = 128;
// A row has at most kMaxSplits splits or kMaxBalancedWorkers parts, one weight each.
constexpr int kMaxParts = kMaxBalancedWorkers;
static_assert(kMaxParts >= kMaxSplits);

// kColumnBlocks = 1: CTA c handles row c, each thread 4 of the d_v columns over every split
// (many rows: one memory round trip per eight splits). kColumnBlocks = 4: CTA c handles the
// 128-column block c % 4 of row c / 4, and its four warps take every fourth split each, their
// sums meeting in shared memory (few rows and many splits: more CTAs, shorter loops).
template <int kColumnBlocks>
__global__ void __launch_bounds__(kCombineThreads)
    combine_kernel(const DecodeParams params, int num_splits, const float* partial_out,
                   const float* partial_lse, const balanced::SequenceParts* sequence_parts) {
  constexpr int kColumnsPerThread = 4;  // one float4
  constexpr int kThreadsPerColumnSet = kDv / kColumnBlocks / kColumnsPerThread;
  constexpr int kSplitGroups = kCombineThreads / kThreadsPerColumnSet;
  static_assert(kThreadsPerColumnSet * kSplitGroups == kCombineThreads);
  __shared__ float split_weight[kMaxParts];
  __shared__ float4 group_sums[kSplitGroups][kThreadsPerColumnSet];

  const long long row_index = blockIdx.x / kColumnBlocks;
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int split_group = threadIdx.x / kThreadsPerColumnSet;
  const int column_thread = threadIdx.x % kThreadsPerColumnSet;
  const int column = (blockIdx.x % kColumnBlocks) * (kDv / kColumnBlocks) +
                     column_thread * kColumnsPerThread;
  const int batch = static_cast<int>(row_index / params.num_heads);
  const int head = static_cast<int>(row_index % params.num_heads);

  // A dependent launch (grid_dependency.cuh): the decode grid's partial results are read only
  // after the wait.
  wait_for_prior_grid();
  // The row's partials are rows first_part, first_part + split_stride, … of the workspace.
  long long first_part = row_index;
  long long split_stride = static_cast<long long>(params.batch) * params.num_heads;
  if (sequence_parts != nullptr) {
    const balanced::SequenceParts parts = sequence_parts[batch];
    if (parts.count == 1) return;  // its one worker wrote the final result
    num_splits = parts.count;
    first_part = static_cast<long long>(parts.first_slot) * params.num_heads + head;
    split_stride = params.num_heads;
  }
  // Everything the row needs from memory is requested before anything waits on it: the splits'
  // lse, the first kPrefetchedSplits of this thread's partial results and the sink, where
  // loading each after the one before cost three round trips (docs/perf-notes.md, version 34:
  // +5 % at batch 1-8, H = 16). A partial is loaded whatever its weight (the address is always
  // in the workspace); an empty split's was never written and must not reach the sum even as
  // 0 · NaN.
  const auto load_partial = [&](int split) {
    return *reinterpret_cast<const float4*>(partial_out +
                                            (first_part + split * split_stride) * params.d_v +
                                            column);
  };
  // The lanes read the splits' lse in parallel (one memory round trip, not one per split),
  // ahead of the partials (issued after them they cost 2.5 % at H = 128, batch 1); every warp
  // finds the maximum itself rather than waiting for one that shares it.
  float max_lse = lane < num_splits ? partial_lse[first_part + lane * split_stride] : -INFINITY;
  // Eight where rows are few and splits many (four lost 1-3 % at H = 16, batch 1-2); two with a
  // CTA per row, whose thousands of short CTAs want residency more than depth (eight took 64
  // registers for 34 and cost 2.3 % at H = 128, batch 32).
  constexpr int kPrefetchedSplits = kColumnBlocks == 4 ? 8 : 2;
  float4 prefetched[kPrefetchedSplits] = {};
#pragma unroll
  for (int k = 0; k < kPrefetchedSplits; ++k) {
    const int split = split_group + k * kSplitGroups;
    if (split < num_splits) prefetched[k] = load_partial(split);
  }
  const float sink_logit = params.sink_logits != nullptr ? params.sink_logits[head] : -INFINITY;
  for (int split = lane + kWarpSize; split < num_splits; split += kWarpSize) {
    max_lse = fmaxf(max_lse, partial_lse[first_part + split * split_stride]);
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    max_lse = fmaxf(max_lse, __shfl_xor_sync(0xffffffffu, max_lse, offset));
  }
  if (warp == 0) {
    for (int split = lane; split < num_splits; split += kWarpSize) {
      const float lse = partial_lse[first_part + split * split_stride];
      split_weight[split] = max_lse == -INFINITY ? 0.0f : expf(lse - max_lse);
    }
  }
  __syncthreads();

  bf16* out_row = params.out + batch * params.out_batch_stride + head * params.out_head_stride;
  if (max_lse == -INFINITY) {  // no tokens at all: out = 0, lse = −inf
    if (split_group == 0) *reinterpret_cast<uint2*>(out_row + column) = make_uint2(0, 0);
    if (threadIdx.x == 0 && blockIdx.x % kColumnBlocks == 0) params.lse[row_index] = -INFINITY;
    return;
  }
  float4 total = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const auto accumulate = [&](int split, const float4& part) {
    const float weight = split_weight[split];
    if (weight == 0.0f) return;
    total.x += weight * part.x;
    total.y += weight * part.y;
    total.z += weight * part.z;
    total.w += weight * part.w;
  };
#pragma unroll
  for (int k = 0; k < kPrefetchedSplits; ++k) {
    const int split = split_group + k * kSplitGroups;
    if (split < num_splits) accumulate(split, prefetched[k]);
  }
  // Rows of more splits: the rest, unrolled so that their loads too go out together.
#pragma unroll 8
  for (int split = split_group + kPrefetchedSplits * kSplitGroups; split < num_splits;
       split += kSplitGroups) {
    accumulate(split, load_partial(split));
  }
  if constexpr (kSplitGroups > 1) {
    group_sums[split_group][column_thread] = total;
    __syncthreads();
    if (split_group != 0) return;
    for (int other = 1; other < kSplitGroups; ++other) {
      const float4 part = group_sums[other][column_thread];
      total.x += part.x;
      total.y += part.y;
      total.z += part.z;
      total.w += part.w;
    }
  }
  float weight_sum = 0.0f;
  for (int split = 0; split < num_splits; ++split) weight_sum += split_weight[split];
  float denominator = weight_sum;
  if (params.sink_logits != nullptr) denominator += expf(sink_logit - max_lse);
  const float inverse = 1.0f / denominator;
  *reinterpret_cast<uint2*>(out_row + column) =
      make_uint2(pack_bf16x2(total.x * inverse, total.y * inverse),
                 pack_bf16x2(total.z * inverse, total.w * inverse));
  if (threadIdx.x == 0 && blockIdx.x % kColumnBlocks == 0) {
    params.lse[row_index] = max_lse + logf(weight_sum);
  }
}

constexpr int kRowsPerCta = 8;
constexpr int kFloat4PerLane = kDv / 4 / kWarpSize;  // a row's 512 columns over one warp
constexpr int kPartsInFlight = 2;

__global__ void __launch_bounds__(kRowsPerCta * kWarpSize)
    combine_rows_kernel(const DecodeParams params, const float* partial_out,
                        const float* partial_lse, const balanced::SequenceParts* sequence_parts) {
  const long long row_index =
      static_cast<long long>(blockIdx.x) * kRowsPerCta + threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  wait_for_prior_grid();  // as in combine_kernel
  if (row_index >= static_cast<long long>(params.batch) * params.num_heads) return;
  const int batch = static_cast<int>(row_index / params.num_heads);
  const int head = static_cast<int>(row_index % params.num_heads);
  const balanced::SequenceParts parts = sequence_parts[batch];
  if (parts.count == 1) return;  // its one worker wrote the final result
  // Part k's rows are first_part + k · num_heads.
  const long long first_part = static_cast<long long>(parts.first_slot) * params.num_heads + head;
  const auto part_row = [&](int part) {
    return first_part + static_cast<long long>(part) * params.num_heads;
  };
  // Requested beside the first lse loads, not after the parts' loop (as in combine_kernel).
  const float sink_logit = params.sink_logits != nullptr ? params.sink_logits[head] : -INFINITY;

  float max_lse = -INFINITY;
  for (int part = lane; part < parts.count; part += kWarpSize) {
    max_lse = fmaxf(max_lse, partial_lse[part_row(part)]);
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    max_lse = fmaxf(max_lse, __shfl_xor_sync(0xffffffffu, max_lse, offset));
  }
  bf16* out_row = params.out + batch * params.out_batch_stride + head * params.out_head_stride;
  if (max_lse == -INFINITY) {  // no tokens at all: out = 0, lse = −inf
#pragma unroll
    for (int i = 0; i < kFloat4PerLane; ++i) {
      *reinterpret_cast<uint2*>(out_row + (i * kWarpSize + lane) * 4) = make_uint2(0, 0);
    }
    if (lane == 0) params.lse[row_index] = -INFINITY;
    return;
  }

  // Each lane: columns 4 · (i · 32 + lane) for i < kFloat4PerLane, in every part; a part's lse
  // (one address for the warp) is loaded beside its partial results.
  float4 total[kFloat4PerLane] = {};
  float weight_sum = 0.0f;
  for (int part0 = 0; part0 < parts.count; part0 += kPartsInFlight) {
    float lse[kPartsInFlight];
    float4 loaded[kPartsInFlight][kFloat4PerLane];
#pragma unroll
    for (int k = 0; k < kPartsInFlight; ++k) {
      const int part = min(part0 + k, parts.count - 1);  // a repeat past the end, not summed
      lse[k] = partial_lse[part_row(part)];
      const float4* row =
          reinterpret_cast<const float4*>(partial_out + part_row(part) * params.d_v);
#pragma unroll
      for (int i = 0; i < kFloat4PerLane; ++i) loaded[k][i] = row[i * kWarpSize + lane];
    }
#pragma unroll
    for (int k = 0; k < kPartsInFlight; ++k) {
      // A part without tokens (lse −inf) must not reach the sum even as 0 · NaN.
      if (part0 + k >= parts.count || lse[k] == -INFINITY) continue;
      const float weight = expf(lse[k] - max_lse);
      weight_sum += weight;
#pragma unroll
      for (int i = 0; i < kFloat4PerLane; ++i) {
        total[i].x += weight * loaded[k][i].x;
        total[i].y += weight * loaded[k][i].y;
        total[i].z += weight * loaded[k][i].z;
        total[i].w += weight * loaded[k][i].w;
      }
    }
  }
  float denominator = weight_sum;
  if (params.sink_logits != nullptr) denominator += expf(sink_logit - max_lse);
  const float inverse = 1.0f / denominator;
#pragma unroll
  for (int i = 0; i < kFloat4PerLane; ++i) {
    *reinterpret_cast<uint2*>(out_row + (i * kWarpSize + lane) * 4) =
        make_uint2(pack_bf16x2(total[i].x * inverse, total[i].y * inverse),
                   pack_bf16x2(total[i].z * inverse, total[i].w * inverse));
  }
  if (lane == 0) params.lse[row_index] = max_lse + logf(weight_sum);
}

}  // namespace

cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse,
                           const balanced::SequenceParts* sequence_parts, cudaStream_t stream) {
  if (params.d_v != kDv || num_splits < 1 || num_splits > kMaxSplits) return cudaErrorInvalidValue;
  const CurrentDevice& device = current_device();
  const long long rows = static_cast<long long>(params.batch) * params.num_heads;
  cudaLaunchAttribute dependent_launch;
  cudaLaunchConfig_t config = launch_config(stream, /*dependent=*/true, dependent_launch);
  // Balanced launches: a warp per row once its CTAs fill the GPU twice over.
  if (sequence_parts != nullptr && rows >= 2LL * kRowsPerCta * device.sm_count) {
    config.gridDim = dim3(static_cast<unsigned>((rows + kRowsPerCta - 1) / kRowsPerCta));
    config.blockDim = dim3(kRowsPerCta * kWarpSize);
    return cudaLaunchKernelEx(&config, combine_rows_kernel, params, partial_out, partial_lse,
                              sequence_parts);
  }
  // Otherwise a CTA per row once the rows alone fill the GPU twice over, else four per row.
  const bool per_row = rows >= 2LL * device.sm_count;
  config.gridDim = dim3(static_cast<unsigned>(per_row ? rows : 4 * rows));
  config.blockDim = dim3(kCombineThreads);
  return per_row ? cudaLaunchKernelEx(&config, combine_kernel<1>, params, num_splits,
                                      partial_out, partial_lse, sequence_parts)
                 : cudaLaunchKernelEx(&config, combine_kernel<4>, params, num_splits,
                                      partial_out, partial_lse, sequence_parts);
}

}  // namespace mlalab::kernels
