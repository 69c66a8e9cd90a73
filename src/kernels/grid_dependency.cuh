#pragma once
// Programmatic dependent launch (sm_90+): a grid launched with it may start while the grid
// before it in the stream still runs, so that launching and placing its CTAs overlaps the
// other's tail instead of following it.
//
//   … previous call's combine ─▶ wgmma decode ─▶ combine ─▶ next call's decode …
//
// Such a grid's CTAs do nothing that reads or writes global memory before
// wait_for_prior_grid(); a grid lets its dependents launch early (allow_dependent_launch())
// only once every CTA of its own is resident, so that waiting dependents never hold a slot one
// of its CTAs still needs. The combine is always launched so; the decode kernels where their
// family waits at their top, the wgmma family (the portable kernel, launched so, lost 12.5 %
// at batch 1 with 256 splits, docs/perf-notes.md, version 31). The decode kernels let the
// combine in after their KV loop; the combine lets the next decode in only when it ends (with
// an early trigger the seesaw at 128 heads measured 1.9 % slower at 8 sequences, 0.7 % faster
// at one, version 32). On older GPUs both calls are no-ops and the launch is plain.
#include <cuda_runtime.h>

#include "kernels/device.h"

namespace mlalab::kernels {

// Waits until the grid this one depends on has finished and its writes are visible (at once
// after a plain launch).
__device__ __forceinline__ void wait_for_prior_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next grid start launching once every CTA of this one has passed this point (or
// exited). Its CTAs still wait_for_prior_grid() before they read what this grid writes.
__device__ __forceinline__ void allow_dependent_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// A launch configuration (grid, block and shared memory still to set): a dependent launch
// where `dependent` and the device has them (sm_90+), else a plain one. `attribute` is the
// caller's, which must outlive the launch call.
inline cudaLaunchConfig_t launch_config(cudaStream_t stream, bool dependent,
                                        cudaLaunchAttribute& attribute) {
  attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent && current_device().compute_capability >= 90 ? 1 : 0;
  return config;
}

}  // namespace mlalab::kernels
