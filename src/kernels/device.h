#pragma once
// The current CUDA device as the kernels' host code needs it (which architecture's code may
// run, how many SMs the combine fills), asked once per process: the tool drives one device.
namespace mlalab::kernels {

struct CurrentDevice {
  int compute_capability = 0;  // 10 · major + minor, e.g. 90; 0 when no device answers
  int sm_count = 1;
  int smem_optin_bytes = 0;    // the most dynamic shared memory a CTA may opt in to; 0: unknown
  int smem_per_sm_bytes = 0;   // 0: unknown
  bool present = false;        // a device answered: the fields above are its own, else defaults
};

const CurrentDevice& current_device();

}  // namespace mlalab::kernels
