#include "kernels/device.h"

#include <cuda_runtime_api.h>

namespace mlalab::kernels {
namespace {

constexpr int kKhzPerMhz = 1000;

// One attribute of the device, or 0 when the runtime cannot tell.
int attribute(cudaDeviceAttr which, int ordinal) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, which, ordinal) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return value;
}

}  // namespace

std::string cuda_version_text(int version) {
  constexpr int kMajorScale = 1000;
  constexpr int kMinorScale = 10;
  return std::to_string(version / kMajorScale) + "." +
         std::to_string((version % kMajorScale) / kMinorScale);
}

const CurrentDevice& current_device() {
  static const CurrentDevice device = [] {
    CurrentDevice found;
    int ordinal = 0;
    cudaDeviceProp properties{};
    if (cudaGetDevice(&ordinal) != cudaSuccess ||
        cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) {
      cudaGetLastError();  // no usable device: leave no error behind for the next caller
      return found;
    }
    found.present = true;
    found.name = properties.name;
    found.compute_capability = 10 * properties.major + properties.minor;
    if (const int sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal); sm_count > 0) {
      found.sm_count = sm_count;
    }
    found.smem_optin_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
    found.smem_per_sm_bytes = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal);
    found.l2_bytes = static_cast<std::size_t>(attribute(cudaDevAttrL2CacheSize, ordinal));
    found.global_mem_bytes = properties.totalGlobalMem;
    found.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, ordinal) / kKhzPerMhz;
    if (cudaDriverGetVersion(&found.cuda_driver_version) != cudaSuccess ||
        cudaRuntimeGetVersion(&found.cuda_runtime_version) != cudaSuccess) {
      cudaGetLastError();
    }
    return found;
  }();
  return device;
}

}  // namespace mlalab::kernels
