#include "bench/device_info.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace mlalab::bench {
namespace {

// The CUDA runtime answers cudaErrorInsufficientDriver both without a driver and with one too
// old: only whether the driver is installed tells the two apart.
TEST(NoDeviceReason, WithoutADriverSaysSoAndNotWhatCudaSays) {
  EXPECT_EQ(no_device_reason(cudaErrorInsufficientDriver, false), "no NVIDIA driver/GPU found");
  EXPECT_EQ(no_device_reason(cudaErrorNoDevice, false), "no NVIDIA driver/GPU found");
  EXPECT_EQ(no_device_reason(cudaErrorUnknown, false), "no NVIDIA driver/GPU found");
}

TEST(NoDeviceReason, ADriverWithoutAGpuIsTheSameToAUser) {
  EXPECT_EQ(no_device_reason(cudaErrorNoDevice, true), "no NVIDIA driver/GPU found");
}

// With a driver, CUDA's own text stays as the detail.
TEST(NoDeviceReason, ADriverThatFailsKeepsCudasText) {
  // CUDART_VERSION is 1000 · major + 10 · minor: 13000 is CUDA 13.0.
  const std::string runtime =
      std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
  EXPECT_EQ(no_device_reason(cudaErrorInsufficientDriver, true),
            "the NVIDIA driver is too old for CUDA " + runtime + " (" +
                cudaGetErrorString(cudaErrorInsufficientDriver) + ")");
  EXPECT_EQ(no_device_reason(cudaErrorDevicesUnavailable, true),
            std::string("the NVIDIA driver is installed, but CUDA cannot use a GPU (") +
                cudaGetErrorString(cudaErrorDevicesUnavailable) + ")");
}

// On a machine without the driver (the CI machines), what every caller of query_device prints:
// configs, bench, ab, verify and the GPU tests' skips.
TEST(QueryDevice, WithoutADriverGivesTheReason) {
  if (nvidia_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  std::string why_not;
  EXPECT_FALSE(query_device(&why_not));
  EXPECT_EQ(why_not, "no NVIDIA driver/GPU found");
}

}  // namespace
}  // namespace mlalab::bench
