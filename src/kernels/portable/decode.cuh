#pragma once
// PLACEHOLDER while the real kernel is written (replaced within the hour).
#include "kernels/portable/kernel.h"
#include "kernels/portable/traits.h"

namespace mlalab::kernels::portable {

template <int kBlockH, int kBlockT, int kWarps, int kStages>
__global__ void decode_kernel(DecodeParams) {}

template <int kBlockH, int kBlockT, int kWarps, int kStages>
cudaError_t launch_variant(const DecodeParams&, const LaunchPlan&, void*, cudaStream_t) {
  return cudaErrorNotSupported;
}

template <int kBlockH, int kBlockT, int kWarps, int kStages>
VariantHandles variant_handles() {
  return {&launch_variant<kBlockH, kBlockT, kWarps, kStages>,
          reinterpret_cast<const void*>(&decode_kernel<kBlockH, kBlockT, kWarps, kStages>)};
}

}  // namespace mlalab::kernels::portable

#define MLALAB_INSTANTIATE_PORTABLE(block_h, block_t, warps, stages) \
  template mlalab::kernels::portable::VariantHandles                 \
  mlalab::kernels::portable::variant_handles<block_h, block_t, warps, stages>();
