// Split-KV combine: merges the num_splits partial results of every (batch entry, head).
//   Each partial s holds out_s = Σ_{j∈s} e^{x_j} V_j / Σ_{j∈s} e^{x_j} and lse_s = ln Σ_{j∈s} e^{x_j}.
//   With M = max_s lse_s and w_s = e^{lse_s − M}:
//     lse = M + ln Σ_s w_s,   out = Σ_s w_s · out_s / (Σ_s w_s + e^{sink − M}).
//   Splits without tokens have lse_s = −inf, weight 0, and their out_s is never read.
//
// Grid → work: CTA c handles row c / kColumnBlocks (= batch · num_heads + head) and the
// 128-column block c % kColumnBlocks of d_v. Within a CTA, warp w sums splits w, w+4, ...
// (so a long split list keeps four warps' loads in flight), each lane 4 columns; the four
// warp sums meet in shared memory.
#include <cuda_runtime.h>

#include <cmath>

#include "core/layout.h"
#include "kernels/portable/kernel.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/portable/traits.h"

namespace mlalab::kernels::portable {
namespace {

constexpr int kCombineWarps = 4;
constexpr int kColumnsPerLane = 4;  // one float4
constexpr int kColumnsPerBlock = kWarpSize * kColumnsPerLane;
constexpr int kColumnBlocks = kDv / kColumnsPerBlock;

__global__ void __launch_bounds__(kCombineWarps * kWarpSize)
    combine_kernel(const DecodeParams params, int num_splits, const float* partial_out,
                   const float* partial_lse) {
  __shared__ float split_weight[kMaxSplits];
  __shared__ float4 warp_sums[kCombineWarps][kWarpSize];
  __shared__ float max_lse_shared;

  const long long row_index = blockIdx.x / kColumnBlocks;
  const int column = (blockIdx.x % kColumnBlocks) * kColumnsPerBlock +
                     (threadIdx.x % kWarpSize) * kColumnsPerLane;
  const int warp = threadIdx.x / kWarpSize;
  const int batch = static_cast<int>(row_index / params.num_heads);
  const int head = static_cast<int>(row_index % params.num_heads);
  const long long split_stride = static_cast<long long>(params.batch) * params.num_heads;

  if (threadIdx.x == 0) {
    float max_lse = -INFINITY;
    for (int split = 0; split < num_splits; ++split) {
      max_lse = fmaxf(max_lse, partial_lse[split * split_stride + row_index]);
    }
    max_lse_shared = max_lse;
  }
  __syncthreads();
  const float max_lse = max_lse_shared;
  for (int split = threadIdx.x; split < num_splits; split += blockDim.x) {
    const float lse = partial_lse[split * split_stride + row_index];
    split_weight[split] = max_lse == -INFINITY ? 0.0f : expf(lse - max_lse);
  }
  __syncthreads();

  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
  for (int split = warp; split < num_splits; split += kCombineWarps) {
    const float weight = split_weight[split];
    if (weight == 0.0f) continue;
    const float4 part = *reinterpret_cast<const float4*>(
        partial_out + (split * split_stride + row_index) * params.d_v + column);
    acc.x += weight * part.x;
    acc.y += weight * part.y;
    acc.z += weight * part.z;
    acc.w += weight * part.w;
  }
  warp_sums[warp][threadIdx.x % kWarpSize] = acc;
  __syncthreads();
  if (warp != 0) return;

  bf16* out_row = params.out + batch * params.out_batch_stride + head * params.out_head_stride;
  if (max_lse == -INFINITY) {  // no tokens at all: out = 0, lse = −inf
    *reinterpret_cast<uint2*>(out_row + column) = make_uint2(0, 0);
    if (threadIdx.x == 0 && blockIdx.x % kColumnBlocks == 0) params.lse[row_index] = -INFINITY;
    return;
  }
  float4 total = warp_sums[0][threadIdx.x];
  for (int other = 1; other < kCombineWarps; ++other) {
    const float4 part = warp_sums[other][threadIdx.x];
    total.x += part.x;
    total.y += part.y;
    total.z += part.z;
    total.w += part.w;
  }
  float weight_sum = 0.0f;
  for (int split = 0; split < num_splits; ++split) weight_sum += split_weight[split];
  float denominator = weight_sum;
  if (params.sink_logits != nullptr) denominator += expf(params.sink_logits[head] - max_lse);
  const float inverse = 1.0f / denominator;
  *reinterpret_cast<uint2*>(out_row + column) =
      make_uint2(pack_bf16x2(total.x * inverse, total.y * inverse),
                 pack_bf16x2(total.z * inverse, total.w * inverse));
  if (threadIdx.x == 0 && blockIdx.x % kColumnBlocks == 0) {
    params.lse[row_index] = max_lse + logf(weight_sum);
  }
}

}  // namespace

cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse, cudaStream_t stream) {
  if (params.d_v != kDv || num_splits < 1 || num_splits > kMaxSplits) return cudaErrorInvalidValue;
  const long long ctas = static_cast<long long>(params.batch) * params.num_heads * kColumnBlocks;
  combine_kernel<<<static_cast<unsigned>(ctas), kCombineWarps * kWarpSize, 0, stream>>>(
      params, num_splits, partial_out, partial_lse);
  return cudaGetLastError();
}

}  // namespace mlalab::kernels::portable
