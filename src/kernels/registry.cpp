#include "kernels/registry.h"

#include <fmt/format.h>

#include <vector>

#include "core/validate.h"
#include "kernels/device.h"
#include "kernels/portable/kernel.h"
#include "kernels/wgmma/kernel.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {

// Generated at build time from the compiled objects (cmake/hash_variant_code.py).
VariantCodeHashes variant_code_hashes(std::string_view name);

namespace {

Variant make_variant(const VariantShape& shape, VariantHandles handles) {
  const std::string name = variant_name(shape);
  const VariantCodeHashes hashes = variant_code_hashes(name);
  return Variant{.name = name,
                 .shape = shape,
                 .handles = handles,
                 .code_hash = std::string(hashes.code_hash),
                 .code_hash_with_names = std::string(hashes.with_names)};
}

#define MLALAB_PORTABLE_VARIANT(kBlockH, kBlockT, kWarps, kStages)                           \
  make_variant(VariantShape{.family = KernelFamily::kPortable,                               \
                            .block_h = kBlockH,                                              \
                            .block_t = kBlockT,                                              \
                            .warps = kWarps,                                                 \
                            .stages = kStages},                                              \
               portable::variant_handles<kBlockH, kBlockT, kWarps, kStages>()),
#define MLALAB_WGMMA_VARIANT(kBlockT, kStages)                                                \
  make_variant(VariantShape{.family = KernelFamily::kWgmma,                                  \
                            .block_h = wgmma::kBlockH,                                       \
                            .block_t = kBlockT,                                              \
                            .warps = wgmma::kWarps,                                          \
                            .stages = kStages},                                              \
               wgmma::variant_handles<kBlockT, kStages>()),
#define MLALAB_WGMMA_SWAPPED_VARIANT(kStages, kWholeTiles)                                   \
  make_variant(VariantShape{.family = KernelFamily::kWgmma,                                  \
                            .block_h = wgmma::kSwappedBlockH,                                \
                            .block_t = wgmma::kSwappedBlockT,                                \
                            .warps = wgmma::kSwappedWarps,                                   \
                            .stages = kStages,                                               \
                            .whole_tiles = kWholeTiles},                                     \
               wgmma::swapped_variant_handles<kStages, kWholeTiles>()),

const std::vector<Variant>& table() {
  static const std::vector<Variant> variants = {
#include "variant_table.inc"
  };
  return variants;
}

#undef MLALAB_PORTABLE_VARIANT
#undef MLALAB_WGMMA_VARIANT
#undef MLALAB_WGMMA_SWAPPED_VARIANT

}  // namespace

std::span<const Variant> compiled_variants() { return table(); }

const Variant* find_variant(std::string_view name) {
  for (const auto& variant : table()) {
    if (variant.name == name) return &variant;
  }
  return nullptr;
}

const Variant* find_variant(const VariantShape& shape) {
  for (const auto& variant : table()) {
    if (variant.shape == shape) return &variant;
  }
  return nullptr;
}

BuildSelection build_selection() {
#include "build_selection.inc"
  return BuildSelection{.variants_regex = kVariantsRegex, .cuda_archs = kCudaArchs};
}

cudaError_t max_ctas_per_sm(const Variant& variant, int d_qk, int* ctas, bool balanced) {
  *ctas = 0;
  // The wgmma family's code exists for every compiled architecture, but only sm_90a's does
  // the work (the others trap); its launch refuses other GPUs the same way.
  if (variant.shape.family == KernelFamily::kWgmma && !wgmma::device_is_sm90a()) {
    return cudaErrorNoKernelImageForDevice;
  }
  const void* kernel = balanced ? variant.handles.balanced_kernel : variant.handles.decode_kernel;
  const int smem = decode_smem_bytes(variant.shape, d_qk);
  cudaFuncAttributes attributes{};
  if (const auto status = cudaFuncGetAttributes(&attributes, kernel); status != cudaSuccess) {
    return status;
  }
  if (smem + static_cast<int>(attributes.sharedSizeBytes) > current_device().smem_optin_bytes) {
    return cudaSuccess;
  }
  if (const auto status =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      status != cudaSuccess) {
    return status;
  }
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, kernel, threads_of(variant.shape),
                                                       smem);
}

cudaError_t max_split_pair_clusters(const Variant& variant, int d_qk, int* clusters) {
  *clusters = 0;
  if (!wgmma::merges_split_pairs(variant.shape)) return cudaSuccess;
  int ctas = 0;  // (also opts the kernel in to its shared memory)
  if (const auto status = max_ctas_per_sm(variant, d_qk, &ctas);
      status != cudaSuccess || ctas == 0) {
    return status;
  }
  cudaLaunchAttribute pair{};
  pair.id = cudaLaunchAttributeClusterDimension;
  pair.val.clusterDim = {.x = 2, .y = 1, .z = 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(2);
  config.blockDim = dim3(static_cast<unsigned>(threads_of(variant.shape)));
  config.dynamicSmemBytes = static_cast<std::size_t>(decode_smem_bytes(variant.shape, d_qk));
  config.attrs = &pair;
  config.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(clusters, variant.handles.decode_kernel, &config);
}

LaunchStatus launch(const DecodeParams& params, const KernelConfig& config,
                    const LaunchPlan& plan, void* workspace, cudaStream_t stream) {
  const Variant* variant = find_variant(config.shape);
  if (variant == nullptr) {
    return {.error = cudaErrorInvalidConfiguration, .refusal = LaunchRefusal::kCannotRunHere};
  }
  return variant->handles.launch(params, plan, workspace, stream);
}

std::string launch_failure_text(const LaunchStatus& status, const DecodeParams& params,
                                const KernelConfig& config) {
  switch (status.refusal) {
    case LaunchRefusal::kInvalidInput:
      if (const auto error = validate_shapes(params)) return "invalid input: " + error->message();
      return "invalid input: the launch plan or workspace does not match the call";
    case LaunchRefusal::kCannotRunHere:
      return "cannot run here: " + cannot_run_reason(config.shape, params.d_qk)
                                       .value_or(cudaGetErrorString(status.error));
    case LaunchRefusal::kNone:
      break;
  }
  return fmt::format("launch failed: {}", cudaGetErrorString(status.error));
}

std::optional<std::string> cannot_run_reason(const VariantShape& shape, int d_qk) {
  if (find_variant(shape) == nullptr) {
    return fmt::format("{} is not compiled into this build (MLALAB_VARIANTS)",
                       variant_name(shape));
  }
  const CurrentDevice& device = current_device();
  if (shape.family == KernelFamily::kWgmma &&
      device.compute_capability != wgmma::kComputeCapability) {
    return fmt::format("needs sm_{}a (wgmma), this GPU is sm_{}", wgmma::kComputeCapability,
                       device.compute_capability);
  }
  const int smem = decode_smem_bytes(shape, d_qk);
  if (device.smem_optin_bytes > 0 && smem > device.smem_optin_bytes) {
    return fmt::format("needs {} B of shared memory per CTA, this GPU allows {} B", smem,
                       device.smem_optin_bytes);
  }
  return std::nullopt;
}

}  // namespace mlalab::kernels
