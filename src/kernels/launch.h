#pragma once
// What every kernel family provides to the registry, and what the families share: the launch
// entry of a compiled variant, the split-KV combine kernel, and the shared-memory plan.
#include <cuda_runtime_api.h>

#include "core/decode_params.h"
#include "core/kernel_config.h"
#include "kernels/balanced_partition.h"
#include "kernels/split_plan.h"

namespace mlalab::kernels {

// Why a launch was refused before any CUDA work. The tuner and every caller must tell "this
// variant cannot run here" (take another) from "your input is wrong" (fix the call): both used
// to come back as cudaErrorInvalidValue.
enum class LaunchRefusal {
  kNone,           // not refused: launched, or a CUDA call failed (LaunchStatus::error says which)
  kInvalidInput,   // the call's shapes, plan or workspace: validate_shapes names the field
  kCannotRunHere,  // the variant on this GPU or in this build: cannot_run_reason says why
};

struct LaunchStatus {
  cudaError_t error = cudaSuccess;
  LaunchRefusal refusal = LaunchRefusal::kNone;

  bool ok() const { return error == cudaSuccess; }
};

using LaunchFn = LaunchStatus (*)(const DecodeParams& params, const LaunchPlan& plan,
                                  void* workspace, cudaStream_t stream);

struct VariantHandles {
  LaunchFn launch;             // validates, then launches decode (+ the combine if balanced,
                               // or split without merging pairs: LaunchPlan::split_pairs)
  // The __global__ symbols, for attribute and occupancy queries: the split kernel (what
  // `mlalab configs` and the feasibility rules judge) and the balanced one.
  const void* decode_kernel;
  const void* balanced_kernel;
};

// Merges the partial results of a split or balanced launch (LSE-weighted, adding the sink to
// the denominator) into out and lse. Split launches (sequence_parts nullptr): every row has
// num_splits partials. Balanced launches: sequence_parts[b] says where sequence b's parts are;
// a sequence with one part already has its final result, an empty one gets out = 0,
// lse = −inf. Defined in combine.cu; one kernel for every variant. On sm_90 and newer it is
// launched as a programmatic dependent of the decode kernel, so its launch overlaps the decode
// kernel's last CTAs.
cudaError_t launch_combine(const DecodeParams& params, int num_splits, const float* partial_out,
                           const float* partial_lse,
                           const balanced::SequenceParts* sequence_parts, cudaStream_t stream);

// Dynamic shared memory of a variant's decode kernel for a layout width, from its family's
// traits (host code, no GPU needed).
int decode_smem_bytes(const VariantShape& shape, int d_qk);

}  // namespace mlalab::kernels
