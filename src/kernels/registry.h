#pragma once
// The runtime table of every compiled kernel variant. It is generated from the one list in
// cmake/variants.cmake (which also generates the instantiation units), so the CLI, the tuner
// and the tests iterate the same set, and nothing else lists variants by hand.
#include <cuda_runtime_api.h>

#include <span>
#include <string>
#include <string_view>

#include "core/kernel_config.h"
#include "kernels/launch.h"
#include "kernels/split_plan.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {

struct Variant {
  std::string name;  // encodes the shape: h16_t16_w4_s2, wgmma_h64_t64_w8_s2
  VariantShape shape;
  VariantHandles handles;
  std::string code_hash;  // SHA-256 of the variant's SASS and the combine kernel's
};

// Every variant this build compiled (a build may select a subset: MLALAB_VARIANTS).
std::span<const Variant> compiled_variants();

const Variant* find_variant(std::string_view name);
const Variant* find_variant(const VariantShape& shape);

// The build's selection, as scripts/build.sh takes it: the MLALAB_VARIANTS regex and the
// MLALAB_CUDA_ARCHS list this binary was configured with, so that a report can say how to
// rebuild exactly what ran.
struct BuildSelection {
  std::string_view variants_regex;  // e.g. ^(h16_t16_w4_s2|h64_t32_w8_s2)$
  std::string_view cuda_archs;      // e.g. 90a;80;120
};
BuildSelection build_selection();

// The CPU backend's counterpart of Variant::code_hash: the SHA-256 of the machine code a timed
// CPU call runs (kernels/cpu and the input check before it), generated at build time by
// cmake/hash_cpu_code.py. It changes when that code changes, not when only the commit does.
std::string_view cpu_backend_code_hash();

// Threads per CTA of a variant: its MMA warps, and the wgmma family's copy warp.
constexpr int threads_of(const VariantShape& shape) {
  return shape.family == KernelFamily::kWgmma ? wgmma::kThreads : shape.warps * 32;
}

// Resident CTAs per SM for the variant at the layout's shared-memory size (needs a GPU);
// 0 when it cannot launch at all.
cudaError_t max_ctas_per_sm(const Variant& variant, int d_qk, int* ctas);

// Launch a planned call: picks the variant by config.shape, validates shapes, launches.
// Returns cudaErrorInvalidValue for a shape the variant does not accept (call
// validate_shapes first for the message) and cudaErrorInvalidConfiguration for a variant not
// compiled into this build. Never exits.
cudaError_t launch(const DecodeParams& params, const KernelConfig& config,
                   const LaunchPlan& plan, void* workspace, cudaStream_t stream);

}  // namespace mlalab::kernels
