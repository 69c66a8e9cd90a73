#pragma once
// Declarations only: the launch entry of each compiled portable-family variant. The kernel
// bodies live in decode.cuh and combine.cuh; each variant is instantiated in its own small
// generated unit (see cmake/variants.cmake), so a change recompiles little.
#include <cuda_runtime_api.h>

#include "core/decode_params.h"
#include "kernels/split_plan.h"

namespace mlalab::kernels::portable {

using LaunchFn = cudaError_t (*)(const DecodeParams& params, const LaunchPlan& plan,
                                 void* workspace, cudaStream_t stream);

struct VariantHandles {
  LaunchFn launch;             // validates shapes, then launches decode (+ combine if split)
  const void* decode_kernel;   // the __global__ symbol, for attribute and occupancy queries
};

template <int kBlockH, int kBlockT, int kWarps, int kStages>
VariantHandles variant_handles();

// Merges the num_splits partial results of a split-KV launch (LSE-weighted, adding the sink
// to the denominator) into out and lse. Defined in combine.cu; one kernel for every variant.
cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse, cudaStream_t stream);

// Dynamic shared memory of the decode kernel for a layout width, from traits.h.
int decode_smem_bytes(const VariantShape& shape, int d_qk);

}  // namespace mlalab::kernels::portable
