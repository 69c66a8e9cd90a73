#include "kernels/wgmma/tensor_maps.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/wgmma/traits.h"

namespace mlalab::kernels::wgmma {
namespace {

// TMA's rule for global strides and the base address: multiples of 16 bytes, below 2^40.
bool tma_expressible(std::int64_t bytes) {
  return bytes > 0 && bytes % 16 == 0 && bytes < (std::int64_t{1} << 40);
}

// The four-dimensional view of tensor_maps.h over `base`: `rows` rows of `d_qk` bf16,
// `row_stride` elements apart, `outer` times, `outer_stride` elements apart; boxes of
// `box_rows` rows and `box_spans` spans (0: all of a row's).
bool encode_span_tiles(const bf16* base, int d_qk, int rows, std::int64_t row_stride, int outer,
                       std::int64_t outer_stride, int box_rows, int box_spans, CUtensorMap* map) {
  const std::int64_t row_bytes = row_stride * 2;
  const std::int64_t outer_bytes = outer_stride * 2;
  if (rows < 1 || outer < 1 || d_qk % kSpanElems != 0 || !tma_expressible(row_bytes) ||
      !tma_expressible(outer_bytes) || reinterpret_cast<std::uintptr_t>(base) % 16 != 0) {
    return false;
  }
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint32_t spans = static_cast<cuuint32_t>(d_qk / kSpanElems);
  const cuuint64_t dims[4] = {kSpanElems, static_cast<cuuint64_t>(rows), spans,
                              static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(row_bytes), kSpanBytes,
                                 static_cast<cuuint64_t>(outer_bytes)};
  const cuuint32_t box[4] = {kSpanElems, static_cast<cuuint32_t>(box_rows),
                             box_spans > 0 ? static_cast<cuuint32_t>(box_spans) : spans, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  // No L2 promotion: with 256-byte promotion the H200 landed these boxes ~8 % below a bulk
  // copy of the same bytes, without it at the bulk rate; an H100's copies lost nothing to it
  // (docs/results/2026-12-06-tile-pattern/, 2026-12-06-l2-promotion/; perf-notes, version 60).
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<bf16*>(base), dims,
                strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
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

bool encode_kv_tile_map(const DecodeParams& params, int tile_rows, int box_spans,
                        CUtensorMap* map) {
  return params.page_size >= tile_rows &&
         encode_span_tiles(params.kv_cache, params.d_qk, params.page_size, params.kv_row_stride,
                           params.num_pages, params.kv_page_stride, tile_rows, box_spans, map);
}

bool encode_q_tile_map(const DecodeParams& params, int block_h, CUtensorMap* map) {
  return encode_span_tiles(params.q, params.d_qk, params.num_heads, params.q_head_stride,
                           params.batch, params.q_batch_stride, block_h, 0, map);
}

}  // namespace mlalab::kernels::wgmma
