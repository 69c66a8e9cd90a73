#include "kernels/device.h"

#include <cuda_runtime_api.h>

namespace mlalab::kernels {

const CurrentDevice& current_device() {
  static const CurrentDevice device = [] {
    CurrentDevice found;
    int ordinal = 0;
    int major = 0;
    int minor = 0;
    int sm_count = 0;
    if (cudaGetDevice(&ordinal) != cudaSuccess) return found;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal) !=
            cudaSuccess) {
      cudaGetLastError();  // no usable device: leave no error behind for the next caller
      return found;
    }
    found.present = true;
    found.compute_capability = 10 * major + minor;
    if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal) ==
            cudaSuccess &&
        sm_count > 0) {
      found.sm_count = sm_count;
    }
    int smem_optin = 0;
    if (cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal) ==
        cudaSuccess) {
      found.smem_optin_bytes = smem_optin;
    }
    int smem_per_sm = 0;
    if (cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                               ordinal) == cudaSuccess) {
      found.smem_per_sm_bytes = smem_per_sm;
    }
    return found;
  }();
  return device;
}

}  // namespace mlalab::kernels
