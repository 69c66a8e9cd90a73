#pragma once
// Declarations only: the launch entry of each compiled portable-family variant. The kernel
// body lives in decode.cuh; each variant is instantiated in its own small generated unit
// (see cmake/variants.cmake), so a change recompiles little.
#include "kernels/launch.h"

namespace mlalab::kernels::portable {

template <int kBlockH, int kBlockT, int kWarps, int kStages>
VariantHandles variant_handles();

}  // namespace mlalab::kernels::portable
