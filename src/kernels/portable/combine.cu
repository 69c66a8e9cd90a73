// Split-KV combine: one CTA per (batch entry, head) merges the num_splits partial results.
//   Each partial s holds out_s = Σ_{j∈s} e^{x_j} V_j / Σ_{j∈s} e^{x_j} and lse_s = ln Σ_{j∈s} e^{x_j}.
//   With M = max_s lse_s and w_s = e^{lse_s − M}:
//     lse = M + ln Σ_s w_s,   out = Σ_s w_s · out_s / (Σ_s w_s + e^{sink − M}).
//   Splits without tokens have lse_s = −inf, weight 0, and their out_s is never read.
#include <cuda_runtime.h>

#include <cmath>

#include "core/layout.h"
#include "kernels/portable/kernel.h"
#include "kernels/portable/primitives.cuh"

namespace mlalab::kernels::portable {
namespace {

constexpr int kCombineThreads = 128;  // 128 threads × 4 columns = the 512 columns of d_v
constexpr int kColumnsPerThread = 4;
static_assert(kCombineThreads * kColumnsPerThread == kDv);

__global__ void __launch_bounds__(kCombineThreads)
    combine_kernel(const DecodeParams params, int num_splits, const float* partial_out,
                   const float* partial_lse) {
  __shared__ float split_weight[kMaxSplits];
  __shared__ float merged_max;

  const int batch = blockIdx.x / params.num_heads;
  const int head = blockIdx.x % params.num_heads;
  const long long row_index = static_cast<long long>(batch) * params.num_heads + head;
  const long long split_stride = static_cast<long long>(params.batch) * params.num_heads;

  if (threadIdx.x == 0) {
    float max_lse = -INFINITY;
    for (int split = 0; split < num_splits; ++split) {
      max_lse = fmaxf(max_lse, partial_lse[split * split_stride + row_index]);
    }
    merged_max = max_lse;
  }
  __syncthreads();
  const float max_lse = merged_max;
  for (int split = threadIdx.x; split < num_splits; split += kCombineThreads) {
    const float lse = partial_lse[split * split_stride + row_index];
    split_weight[split] = max_lse == -INFINITY ? 0.0f : expf(lse - max_lse);
  }
  __syncthreads();

  bf16* out_row = params.out + batch * params.out_batch_stride + head * params.out_head_stride;
  const int column = threadIdx.x * kColumnsPerThread;
  if (max_lse == -INFINITY) {  // no tokens at all
    *reinterpret_cast<uint2*>(out_row + column) = make_uint2(0, 0);
    if (threadIdx.x == 0) params.lse[row_index] = -INFINITY;
    return;
  }

  float weight_sum = 0.0f;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int split = 0; split < num_splits; ++split) {
    const float weight = split_weight[split];
    weight_sum += weight;
    if (weight == 0.0f) continue;
    const float4 part = *reinterpret_cast<const float4*>(
        partial_out + (split * split_stride + row_index) * params.d_v + column);
    acc.x += weight * part.x;
    acc.y += weight * part.y;
    acc.z += weight * part.z;
    acc.w += weight * part.w;
  }
  float denominator = weight_sum;
  if (params.sink_logits != nullptr) denominator += expf(params.sink_logits[head] - max_lse);
  const float inverse = 1.0f / denominator;
  *reinterpret_cast<uint2*>(out_row + column) =
      make_uint2(pack_bf16x2(acc.x * inverse, acc.y * inverse),
                 pack_bf16x2(acc.z * inverse, acc.w * inverse));
  if (threadIdx.x == 0) params.lse[row_index] = max_lse + logf(weight_sum);
}

}  // namespace

cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse, cudaStream_t stream) {
  if (params.d_v != kDv || num_splits < 1 || num_splits > kMaxSplits) return cudaErrorInvalidValue;
  const int rows = params.batch * params.num_heads;
  combine_kernel<<<rows, kCombineThreads, 0, stream>>>(params, num_splits, partial_out,
                                                       partial_lse);
  return cudaGetLastError();
}

}  // namespace mlalab::kernels::portable
