#pragma once
// Declarations only: the launch entry of each compiled wgmma-family variant (decode.cuh),
// instantiated in generated units like the portable family's (cmake/variants.cmake).
#include "kernels/device.h"
#include "kernels/launch.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {

// decode.cuh: 64 heads per CTA, the heads as the MMAs' M.
template <int kBlockT, int kStages>
VariantHandles variant_handles();
// swapped.cuh: 16 heads per CTA, the tokens as the MMAs' M.
template <int kStages, bool kWholeTiles>
VariantHandles swapped_variant_handles();

// Whether the current device runs the family's sm_90a code (compute capability 9.0 exactly).
inline bool device_is_sm90a() {
  return current_device().compute_capability == kComputeCapability;
}

}  // namespace mlalab::kernels::wgmma
