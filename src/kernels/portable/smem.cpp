#include "kernels/portable/kernel.h"
#include "kernels/portable/traits.h"

namespace mlalab::kernels::portable {

int decode_smem_bytes(const VariantShape& shape, int d_qk) {
  return plan_smem(shape, d_qk).total_bytes;
}

}  // namespace mlalab::kernels::portable
