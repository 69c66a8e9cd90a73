#pragma once
// The runtime table of every compiled kernel variant. It is generated from the one list in
// cmake/variants.cmake (which also generates the instantiation units), so the CLI, the tuner
// and the tests iterate the same set, and nothing else lists variants by hand.
#include <cuda_runtime_api.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/kernel_config.h"
#include "kernels/launch.h"
#include "kernels/split_plan.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {

// A variant's machine code, hashed at build time (cmake/hash_variant_code.py): the SHA-256 of
// its SASS and kernel attributes and the combine kernel's, as `code_hash`, which leaves the
// kernels' names out (a rename with the same machine code keeps it), and `with_names`, the
// form every code hash recorded before 2026-12-06 has, which also covers their mangled names.
// Records in that form still match while the names are unchanged.
struct VariantCodeHashes {
  std::string_view code_hash;
  std::string_view with_names;
};

struct Variant {
  std::string name;  // encodes the shape: h16_t16_w4_s2, wgmma_h64_t64_w8_s2
  VariantShape shape;
  VariantHandles handles;
  std::string code_hash;             // VariantCodeHashes::code_hash: what records hold now
  std::string code_hash_with_names;  // VariantCodeHashes::with_names: older records' form
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
  return shape.family == KernelFamily::kWgmma ? wgmma::threads_of(shape) : shape.warps * 32;
}

// Resident CTAs per SM for the variant's split kernel (or its balanced kernel) at the layout's
// shared-memory size (needs a GPU); 0 when it cannot launch at all.
cudaError_t max_ctas_per_sm(const Variant& variant, int d_qk, int* ctas, bool balanced = false);

// Clusters of two of the variant's split CTAs the GPU holds at once, for variants whose
// two-split launches run as such clusters (wgmma::merges_split_pairs; 0 for the others).
cudaError_t max_split_pair_clusters(const Variant& variant, int d_qk, int* clusters);

// Launch a planned call: picks the variant by config.shape, validates shapes, launches. A
// refused call says why (LaunchStatus::refusal): kInvalidInput for shapes, a plan or a
// workspace the variant does not accept (validate_shapes names the field), kCannotRunHere for
// a variant this GPU or build cannot run (cannot_run_reason says why). Never exits.
LaunchStatus launch(const DecodeParams& params, const KernelConfig& config,
                    const LaunchPlan& plan, void* workspace, cudaStream_t stream);

// Why a variant cannot run on this GPU or in this build at a row width, or nullopt when it
// can: not compiled, the wgmma family on a GPU other than sm_90a, more dynamic shared memory
// than a CTA may opt in to. What launch's kCannotRunHere means, in words.
std::optional<std::string> cannot_run_reason(const VariantShape& shape, int d_qk);

// A failed launch in words, by its kind: "invalid input: num_heads = 0: allowed [1, 128]",
// "cannot run here: needs 232,448 B of shared memory per CTA, this GPU allows 232,448 B",
// "launch failed: <CUDA's error text>".
std::string launch_failure_text(const LaunchStatus& status, const DecodeParams& params,
                                const KernelConfig& config);

}  // namespace mlalab::kernels
