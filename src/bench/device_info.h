#pragma once
// What a benchmark result needs to say about the machine it ran on: the GPU, its limits and
// clocks, the driver and runtime versions, and the commit of the code. Result files carry
// this so that numbers from different machines or builds are never compared blindly.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace mlalab::bench {

struct DeviceInfo {
  std::string gpu{};          // e.g. "NVIDIA H200"
  int sm_count = 0;
  // The SM clock in MHz. NVML is not linked (the binary must run with the driver alone), so
  // the current clock comes from nvidia-smi (read_sm_clock_mhz); where nvidia-smi cannot be
  // read this falls back to max_sm_clock_mhz and sm_clock_is_current says so.
  int sm_clock_mhz = 0;
  bool sm_clock_is_current = false;
  int max_sm_clock_mhz = 0;   // cudaDevAttrClockRate: the peak (boost) clock, not the current one
  std::string driver{};       // "570.86.15 (CUDA 12.8)": nvidia-smi's version when readable
  std::string cuda_runtime{}; // the runtime linked into this binary, e.g. "13.0"
  std::size_t l2_bytes = 0;
  int smem_optin_bytes = 0;   // the most dynamic shared memory one CTA can opt in to
  int smem_per_sm_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

// The current CUDA device, or nullopt when no device is usable (no driver, no device, or a
// driver too old for this runtime); the reason then goes to *why_not when given, as
// no_device_reason words it.
std::optional<DeviceInfo> query_device(std::string* why_not = nullptr);

// Why no device is usable, from the failed status of cudaGetDeviceCount (cudaErrorNoDevice for
// a count of 0) and whether the NVIDIA driver is installed: "no NVIDIA driver/GPU found" when
// it is not, or when it finds no GPU; otherwise what failed, with CUDA's error text. The runtime
// alone cannot tell: it says "driver version is insufficient" for a missing driver too.
std::string no_device_reason(cudaError_t status, bool driver_installed);

// Whether the NVIDIA driver's user-space library (libcuda.so.1), which the CUDA runtime needs,
// can be loaded.
bool nvidia_driver_installed();

// The current SM clock of the current CUDA device in MHz, read through nvidia-smi (selected
// by PCI bus id, so CUDA_VISIBLE_DEVICES cannot mix up devices). -1 when it cannot be read.
// Costs a process start (tens of milliseconds): call it between samples, never inside one.
int read_sm_clock_mhz();

// The current SM clock and the board's power draw, from one nvidia-smi call like
// read_sm_clock_mhz's; -1 for each it cannot tell. The draw is nvidia-smi's power.draw, an
// average over the last second on Ampere and later: it tells whether a load runs at the power
// limit, not what one short sample drew.
struct GpuLoadReading {
  int sm_mhz = -1;
  double power_w = -1.0;
};
GpuLoadReading read_sm_clock_and_power();

// The current, maximum and memory clocks of the current device in MHz and its power limit in
// watts, from one nvidia-smi call like read_sm_clock_mhz's; -1 for each it cannot tell.
struct GpuClocks {
  int sm_mhz = -1;
  int max_sm_mhz = -1;
  int mem_mhz = -1;
  double power_limit_w = -1.0;
};
GpuClocks read_gpu_clocks();

// The commit this binary was built from (git rev-parse at configure time), or "unknown".
std::string git_commit();

}  // namespace mlalab::bench
