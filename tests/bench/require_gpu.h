#pragma once
// Skips a GPU test where no CUDA device is usable, with query_device's reason ("no NVIDIA
// driver/GPU found", or what failed with a driver present), or where the device's compute
// capability is below what the test needs.
#include <gtest/gtest.h>

#include <string>

#include "bench/device_info.h"

#define MLALAB_REQUIRE_GPU()                                               \
  do {                                                                     \
    std::string why_not;                                                   \
    if (!::mlalab::bench::query_device(&why_not)) GTEST_SKIP() << why_not; \
  } while (0)

#define MLALAB_REQUIRE_COMPUTE_CAPABILITY(major, what_needs_it)                          \
  do {                                                                                   \
    std::string why_not;                                                                 \
    const auto device = ::mlalab::bench::query_device(&why_not);                         \
    if (!device) GTEST_SKIP() << why_not;                                                \
    if (device->cc_major < (major)) {                                                    \
      GTEST_SKIP() << what_needs_it << " needs compute capability " << (major) << ".0";  \
    }                                                                                    \
  } while (0)
