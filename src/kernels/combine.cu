// Split-KV combine: merges the num_splits partial results of every (batch entry, head).
//   Each partial s holds out_s = Σ_{j∈s} e^{x_j} V_j / Σ_{j∈s} e^{x_j} and lse_s = ln Σ_{j∈s} e^{x_j}.
//   With M = max_s lse_s and w_s = e^{lse_s − M}:
//     lse = M + ln Σ_s w_s,   out = Σ_s w_s · out_s / (Σ_s w_s + e^{sink − M}).
//   Splits without tokens have lse_s = −inf, weight 0, and their out_s is never read.
//
// Grid → work: CTA c handles row c / kColumnBlocks (= batch · num_heads + head) and the
// 128-column block c % kColumnBlocks of d_v. Within a CTA, warp w sums splits w, w+4, ...
// (so a long split list keeps four warps' loads in flight), each lane 4 columns; the four
// warp sums meet in shared memory. The kernel is latency-bound (a few KB per CTA), so every
// step that waits on memory reads all it needs at once.
#include <cuda_runtime.h>

#include <cmath>

#include "core/layout.h"
#include "kernels/launch.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/portable/traits.h"

namespace mlalab::kernels {
namespace {

using portable::kWarpSize;
using portable::pack_bf16x2;

constexpr int kCombineWarps = 4;
constexpr int kColumnsPerLane = 4;  // one float4
constexpr int kColumnsPerBlock = kWarpSize * kColumnsPerLane;
constexpr int kColumnBlocks = kDv / kColumnsPerBlock;

__global__ void __launch_bounds__(kCombineWarps * kWarpSize)
    combine_kernel(const DecodeParams params, int num_splits, const float* partial_out,
                   const float* partial_lse) {
  __shared__ float split_weight[kMaxSplits];
  __shared__ float4 warp_sums[kCombineWarps][kWarpSize];

  const long long row_index = blockIdx.x / kColumnBlocks;
  const int lane = threadIdx.x % kWarpSize;
  const int column = (blockIdx.x % kColumnBlocks) * kColumnsPerBlock + lane * kColumnsPerLane;
  const int warp = threadIdx.x / kWarpSize;
  const int batch = static_cast<int>(row_index / params.num_heads);
  const int head = static_cast<int>(row_index % params.num_heads);
  const long long split_stride = static_cast<long long>(params.batch) * params.num_heads;

#if __CUDA_ARCH__ >= 900
  // A programmatic dependent launch may start before the decode grid ends: wait until it has
  // finished and its partial results are visible.
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
  // The lanes read the splits' lse in parallel (one memory round trip, not one per split);
  // every warp finds the maximum itself rather than waiting for one that shares it.
  float max_lse = -INFINITY;
  for (int split = lane; split < num_splits; split += kWarpSize) {
    max_lse = fmaxf(max_lse, partial_lse[split * split_stride + row_index]);
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    max_lse = fmaxf(max_lse, __shfl_xor_sync(0xffffffffu, max_lse, offset));
  }
  if (warp == 0) {
    for (int split = lane; split < num_splits; split += kWarpSize) {
      const float lse = partial_lse[split * split_stride + row_index];
      split_weight[split] = max_lse == -INFINITY ? 0.0f : expf(lse - max_lse);
    }
  }
  __syncthreads();

  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
  for (int split = warp; split < num_splits; split += kCombineWarps) {
    // Loaded whatever the weight (the address is always in the workspace), so unrolled
    // iterations issue their loads together; an empty split's partial was never written and
    // must not reach the sum even as 0 · NaN.
    const float4 part = *reinterpret_cast<const float4*>(
        partial_out + (split * split_stride + row_index) * params.d_v + column);
    const float weight = split_weight[split];
    if (weight == 0.0f) continue;
    acc.x += weight * part.x;
    acc.y += weight * part.y;
    acc.z += weight * part.z;
    acc.w += weight * part.w;
  }
  warp_sums[warp][lane] = acc;
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

// Programmatic dependent launch exists from sm_90 on; asked once per process (one device).
bool device_has_dependent_launch() {
  static const bool supported = [] {
    int device = 0;
    int major = 0;
    return cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
               cudaSuccess &&
           major >= 9;
  }();
  return supported;
}

}  // namespace

cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse, cudaStream_t stream) {
  if (params.d_v != kDv || num_splits < 1 || num_splits > kMaxSplits) return cudaErrorInvalidValue;
  const long long ctas = static_cast<long long>(params.batch) * params.num_heads * kColumnBlocks;
  cudaLaunchAttribute dependent_launch{};
  dependent_launch.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent_launch.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(ctas));
  config.blockDim = dim3(kCombineWarps * kWarpSize);
  config.stream = stream;
  config.attrs = &dependent_launch;
  config.numAttrs = device_has_dependent_launch() ? 1 : 0;
  return cudaLaunchKernelEx(&config, combine_kernel, params, num_splits, partial_out,
                            partial_lse);
}

}  // namespace mlalab::kernels
