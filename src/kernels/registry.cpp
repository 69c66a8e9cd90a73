#include "kernels/registry.h"

#include <vector>

#include "core/validate.h"
#include "kernels/portable/kernel.h"
#include "kernels/wgmma/kernel.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::kernels {

// Generated at build time from the compiled objects (cmake/hash_variant_code.cmake).
std::string_view variant_code_hash(std::string_view name);

namespace {

Variant make_variant(const VariantShape& shape, VariantHandles handles) {
  const std::string name = variant_name(shape);
  return Variant{.name = name,
                 .shape = shape,
                 .handles = handles,
                 .code_hash = std::string(variant_code_hash(name))};
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

const std::vector<Variant>& table() {
  static const std::vector<Variant> variants = {
#include "variant_table.inc"
  };
  return variants;
}

#undef MLALAB_PORTABLE_VARIANT
#undef MLALAB_WGMMA_VARIANT

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

cudaError_t max_ctas_per_sm(const Variant& variant, int d_qk, int* ctas) {
  *ctas = 0;
  // The wgmma family's code exists for every compiled architecture, but only sm_90a's does
  // the work (the others trap); its launch refuses other GPUs the same way.
  if (variant.shape.family == KernelFamily::kWgmma && !wgmma::device_is_sm90a()) {
    return cudaErrorNoKernelImageForDevice;
  }
  const int smem = decode_smem_bytes(variant.shape, d_qk);
  cudaFuncAttributes attributes{};
  if (const auto status = cudaFuncGetAttributes(&attributes, variant.handles.decode_kernel);
      status != cudaSuccess) {
    return status;
  }
  int device = 0;
  int optin_limit = 0;
  if (const auto status = cudaGetDevice(&device); status != cudaSuccess) return status;
  if (const auto status =
          cudaDeviceGetAttribute(&optin_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
      status != cudaSuccess) {
    return status;
  }
  if (smem + static_cast<int>(attributes.sharedSizeBytes) > optin_limit) return cudaSuccess;
  if (const auto status = cudaFuncSetAttribute(variant.handles.decode_kernel,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      status != cudaSuccess) {
    return status;
  }
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, variant.handles.decode_kernel,
                                                       threads_of(variant.shape), smem);
}

cudaError_t launch(const DecodeParams& params, const KernelConfig& config,
                   const LaunchPlan& plan, void* workspace, cudaStream_t stream) {
  const Variant* variant = find_variant(config.shape);
  if (variant == nullptr) return cudaErrorInvalidConfiguration;
  return variant->handles.launch(params, plan, workspace, stream);
}

}  // namespace mlalab::kernels
