#pragma once
// Declarations only: the launch entry of each compiled wgmma-family variant (decode.cuh),
// instantiated in generated units like the portable family's (cmake/variants.cmake).
#include "kernels/launch.h"

namespace mlalab::kernels::wgmma {

template <int kBlockT, int kStages>
VariantHandles variant_handles();

// Whether the current device runs sm_90a code (compute capability 9.0 exactly); asked once
// per process (one device).
bool device_is_sm90a();

}  // namespace mlalab::kernels::wgmma
