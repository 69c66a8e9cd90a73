#include "kernels/wgmma/kv_tensor_map.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {
namespace {

// TMA's rule for global strides and the base address: multiples of 16 bytes, below 2^40.
bool tma_expressible(std::int64_t bytes) {
  return bytes > 0 && bytes % 16 == 0 && bytes < (std::int64_t{1} << 40);
}

}  // namespace

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &found, 12000,
                                         cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      return PFN_cuTensorMapEncodeTiled_v12000{};
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(found);
  }();
  return encoder;
}

bool encode_kv_tile_map(const DecodeParams& params, int tile_rows, CUtensorMap* map) {
  const std::int64_t row_bytes = params.kv_row_stride * 2;
  const std::int64_t page_bytes = params.kv_page_stride * 2;
  const auto base = reinterpret_cast<std::uintptr_t>(params.kv_cache);
  if (params.page_size < tile_rows || params.num_pages < 1 || params.d_qk % kSpanElems != 0 ||
      !tma_expressible(row_bytes) || !tma_expressible(page_bytes) || base % 16 != 0) {
    return false;
  }
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint32_t spans = static_cast<cuuint32_t>(params.d_qk / kSpanElems);
  const cuuint64_t dims[4] = {kSpanElems, static_cast<cuuint64_t>(params.page_size), spans,
                              static_cast<cuuint64_t>(params.num_pages)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(row_bytes), kSpanBytes,
                                 static_cast<cuuint64_t>(page_bytes)};
  const cuuint32_t box[4] = {kSpanElems, static_cast<cuuint32_t>(tile_rows), spans, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<bf16*>(params.kv_cache),
                dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace mlalab::kernels::wgmma
