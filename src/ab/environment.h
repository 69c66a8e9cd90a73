#pragma once
// Where an A/B run measures: the machine part of its record (run_record.h's
// EnvironmentRecord), so that results from different machines or builds are never compared
// blindly.
#include "ab/run_record.h"
#include "bench/device_info.h"

namespace mlalab::ab {

// The CUDA backend on `device`: its name and SMs, the SM clock now, its maximum and the memory
// clock (one nvidia-smi call; -1 for what it cannot tell), driver, runtime, commit and host.
EnvironmentRecord cuda_environment(const bench::DeviceInfo& device);

// The CPU backend: "cpu (N threads)" with N the hardware threads, the commit and the host.
EnvironmentRecord cpu_environment();

}  // namespace mlalab::ab
