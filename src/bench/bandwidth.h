#pragma once
// The device's achievable memory bandwidth, measured in the same run as the kernels, so that
// a kernel's GB/s can be read as a fraction of what this GPU, at this clock, can stream.
#include <cuda_runtime_api.h>

namespace mlalab::bench {

struct Bandwidth {
  double read_gbps = 0.0;  // streaming read: 16-byte loads over a buffer far larger than L2
  double copy_gbps = 0.0;  // device-to-device cudaMemcpyAsync, read + write bytes counted
};

// Runs on the current device; throws CudaError. Takes well under a second on an H200.
//   read: a grid-stride kernel reads max(2 GiB, 16 × L2) bytes (at most half of the free
//         memory) and xor-reduces them into a 4-byte sink so no load can be dropped;
//   copy: one half of that buffer copied onto the other.
// Each is the median of kTimedRuns runs after kWarmupRuns, each run timed with events.
Bandwidth measure_bandwidth(cudaStream_t stream);

}  // namespace mlalab::bench
