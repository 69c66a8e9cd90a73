#include "kernels/launch.h"
#include "kernels/portable/traits.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {

int decode_smem_bytes(const VariantShape& shape, int d_qk) {
  switch (shape.family) {
    case KernelFamily::kWgmma:
      return wgmma::plan_smem(shape, d_qk).total_bytes;
    case KernelFamily::kPortable:
      break;
  }
  return portable::plan_smem(shape, d_qk).total_bytes;
}

}  // namespace mlalab::kernels
