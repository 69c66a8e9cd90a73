#include <cuda_runtime_api.h>

namespace mlalab::kernels::wgmma {

// sm_90a code runs on compute capability 9.0 only (not on later architectures).
bool device_is_sm90a() {
  static const bool is_sm90a = [] {
    int device = 0;
    int major = 0;
    int minor = 0;
    return cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
               cudaSuccess &&
           cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) ==
               cudaSuccess &&
           major == 9 && minor == 0;
  }();
  return is_sm90a;
}

}  // namespace mlalab::kernels::wgmma
