#pragma once
// Skips a GPU test where no CUDA device is usable, with query_device's reason ("no NVIDIA
// driver/GPU found", or what failed with a driver present).
#include <gtest/gtest.h>

#include <string>

#include "bench/device_info.h"

#define MLALAB_REQUIRE_GPU()                                               \
  do {                                                                     \
    std::string why_not;                                                   \
    if (!::mlalab::bench::query_device(&why_not)) GTEST_SKIP() << why_not; \
  } while (0)
