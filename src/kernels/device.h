#pragma once
// The current CUDA device as the CUDA runtime describes it, asked once per process (the tool
// drives one device): what the kernels' host code needs (which architecture's code may run,
// how many SMs the combine fills, how much shared memory a CTA may have), and the rest of its
// fixed facts, which bench::query_device completes with the driver's and nvidia-smi's words.
// Every layer reads the device here, so that no two of them can disagree about it.
#include <cstddef>
#include <string>

namespace mlalab::kernels {

struct CurrentDevice {
  bool present = false;        // a device answered: the fields below are its own, else defaults
  std::string name;            // e.g. "NVIDIA H200"
  int compute_capability = 0;  // 10 · major + minor, e.g. 90; 0 when no device answers
  int sm_count = 1;
  int smem_optin_bytes = 0;    // the most dynamic shared memory a CTA may opt in to; 0: unknown
  int smem_per_sm_bytes = 0;   // 0: unknown
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int max_sm_clock_mhz = 0;    // the peak (boost) clock, not the current one
  // CUDA versions as the runtime encodes them (1000 · major + 10 · minor): the newest the
  // driver supports, and the runtime linked into this binary.
  int cuda_driver_version = 0;
  int cuda_runtime_version = 0;
};

// 13000 → "13.0".
std::string cuda_version_text(int version);

const CurrentDevice& current_device();

}  // namespace mlalab::kernels
