// What the tensor memory accelerator (TMA) can do with one page of an MLA KV cache: the facts
// issue 12's TMA-fed family stands on, checked on the GPU before that family is written
// (docs/perf-notes.md, "Issue 12, the plan"). A page is 64 rows (tokens) of 576 bf16 (V3), rows
// 1,152 bytes apart; the wgmma operand layouts want it in shared memory either
//   - as 9 chunks of 64 columns, each a 64 × 128 B tile with the 128-byte swizzle (16-byte unit
//     u of row r stored at unit u ^ (r % 8)), K-major for S = Q·Kᵀ and MN-major for P·V, or
//   - in the no-swizzle core-matrix layout (the wgmma family's before 9d47d3e, which moved it
//     to the first): 8-row groups 9,216 B apart,
//     within a group the 16-byte chunk k of row r at k · 128 + (r % 8) · 16.
// Each layout is tried as one copy instruction per page (a box over a view of the cache whose
// strides are not increasing: the driver's documentation describes packed tensors only) and,
// for the swizzled tiles, as 9 two-dimensional boxes (certainly valid). The test encodes each
// tensor map, copies one page chosen from the middle of the cache, and compares every byte
// of shared memory with the layout's formula.
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/cuda_raii.h"
#include "bench/require_gpu.h"
#include "kernels/wgmma/tensor_maps.h"
#include "kernels/wgmma/primitives.cuh"

namespace mlalab {
namespace {

constexpr int kPageRows = 64;
constexpr int kRowElems = 576;
constexpr int kRowBytes = kRowElems * 2;
// A "chunk" here is one 128-byte swizzle span (traits.h's chunks are 16 bytes).
constexpr int kChunkElems = 64;
constexpr int kChunks = kRowElems / kChunkElems;
constexpr int kTileBytes = kPageRows * kRowBytes;  // 73,728
constexpr int kPages = 5;
constexpr int kCopiedPage = 3;

// The element a cache position holds: distinct for every (row, column) of the cache, never 0.
std::uint16_t value_at(int row, int column) {
  return static_cast<std::uint16_t>(1 + (row * 7919 + column * 104729) % 65521);
}

enum class PageLayout { kSwizzledChunks9Boxes, kSwizzledChunksOneBox, kCoreMatricesOneBox };

const char* name_of(PageLayout layout) {
  switch (layout) {
    case PageLayout::kSwizzledChunks9Boxes: return "swizzled_chunks_9_boxes";
    case PageLayout::kSwizzledChunksOneBox: return "swizzled_chunks_one_box";
    case PageLayout::kCoreMatricesOneBox: return "core_matrices_one_box";
  }
  return "?";
}

// The cache position (row in the page, column) whose element shared memory holds at `offset`
// bytes, by the layout's formula.
std::pair<int, int> source_of(PageLayout layout, int offset) {
  const int element = offset % 16 / 2;
  if (layout == PageLayout::kCoreMatricesOneBox) {
    const int group = offset / (8 * kRowBytes);  // 8 rows of 72 16-byte chunks
    const int chunk = offset % (8 * kRowBytes) / 128;
    const int row_in_group = offset % 128 / 16;
    return {group * 8 + row_in_group, chunk * 8 + element};
  }
  const int chunk = offset / (kPageRows * 128);
  const int row = offset % (kPageRows * 128) / 128;
  const int unit = offset % 128 / 16 ^ row % 8;
  return {row, chunk * kChunkElems + unit * 8 + element};
}

// The tensor map of `layout` over a cache of `rows` rows at `cache`, and the coordinates of
// each box that copies page `page` (one box, or 9).
struct PageCopy {
  CUresult encoded = CUDA_ERROR_UNKNOWN;
  CUtensorMap map{};
  int rank = 0;
  std::vector<std::vector<int>> boxes;  // coordinates, innermost first
};

PageCopy encode_page_copy(PageLayout layout, void* cache, int rows, int page) {
  PageCopy copy;
  std::vector<cuuint64_t> dims, strides;
  std::vector<cuuint32_t> box;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  switch (layout) {
    case PageLayout::kSwizzledChunks9Boxes:
      dims = {kRowElems, static_cast<cuuint64_t>(rows)};
      strides = {kRowBytes};
      box = {kChunkElems, kPageRows};
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        copy.boxes.push_back({chunk * kChunkElems, page * kPageRows});
      }
      break;
    case PageLayout::kSwizzledChunksOneBox:
      // [64 columns of a chunk, rows, 9 chunks]: the chunk stride (128 B) below the row's.
      dims = {kChunkElems, static_cast<cuuint64_t>(rows), kChunks};
      strides = {kRowBytes, kChunkElems * 2};
      box = {kChunkElems, kPageRows, kChunks};
      copy.boxes.push_back({0, page * kPageRows, 0});
      break;
    case PageLayout::kCoreMatricesOneBox:
      // [8 elements, 8 rows of a group, 72 chunks, row groups], no swizzle.
      swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
      dims = {8, 8, kRowElems / 8, static_cast<cuuint64_t>(rows / 8)};
      strides = {kRowBytes, 16, 8 * kRowBytes};
      box = {8, 8, kRowElems / 8, kPageRows / 8};
      copy.boxes.push_back({0, 0, 0, page * kPageRows / 8});
      break;
  }
  copy.rank = static_cast<int>(dims.size());
  const std::vector<cuuint32_t> element_strides(dims.size(), 1);
  const auto encode = kernels::wgmma::tensor_map_encoder();
  if (encode == nullptr) return copy;
  copy.encoded = encode(&copy.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, copy.rank, cache,
                        dims.data(), strides.data(), box.data(), element_strides.data(),
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return copy;
}

struct BoxCoordinates {
  int count;
  int values[kChunks][4];
};

// One thread issues every box of the page with one transaction count on one mbarrier; the
// block then copies shared memory out verbatim.
__global__ void copy_page_kernel(const __grid_constant__ CUtensorMap map, int rank,
                                 BoxCoordinates boxes, std::uint8_t* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // No static shared memory: the 128-byte swizzle wants the tile 1,024-byte aligned.
  extern __shared__ __align__(1024) std::uint8_t tile[];
  const auto tile_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  const std::uint32_t barrier = tile_address + kTileBytes;
  if (threadIdx.x == 0) {
    kernels::wgmma::mbarrier_init(barrier, 1);
    kernels::wgmma::fence_async_proxy();
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier),
                 "r"(kTileBytes)
                 : "memory");
    const int box_bytes = kTileBytes / boxes.count;
    for (int i = 0; i < boxes.count; ++i) {
      const std::uint32_t destination = tile_address + i * box_bytes;
      const int* c = boxes.values[i];
      if (rank == 2) {
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(destination),
            "l"(&map), "r"(c[0]), "r"(c[1]), "r"(barrier)
            : "memory");
      } else if (rank == 3) {
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(destination),
            "l"(&map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(barrier)
            : "memory");
      } else {
        kernels::wgmma::tma_load_4d(destination, &map, c[0], c[1], c[2], c[3], barrier);
      }
    }
  }
  __syncthreads();
  kernels::wgmma::mbarrier_wait(barrier, 0);
  for (int i = threadIdx.x; i < kTileBytes / 16; i += blockDim.x) {
    reinterpret_cast<uint4*>(out)[i] = reinterpret_cast<const uint4*>(tile)[i];
  }
#endif
}

class TmaPageLayout : public ::testing::TestWithParam<PageLayout> {};

TEST_P(TmaPageLayout, OnePageLandsInTheLayoutsFormula) {
  MLALAB_REQUIRE_COMPUTE_CAPABILITY(9, "the tensor memory accelerator");
  ASSERT_NE(kernels::wgmma::tensor_map_encoder(), nullptr)
      << "the driver has no cuTensorMapEncodeTiled";

  const int rows = kPages * kPageRows;
  std::vector<std::uint16_t> host(static_cast<std::size_t>(rows) * kRowElems);
  for (int row = 0; row < rows; ++row) {
    for (int column = 0; column < kRowElems; ++column) {
      host[static_cast<std::size_t>(row) * kRowElems + column] = value_at(row, column);
    }
  }
  bench::DeviceBuffer<std::uint16_t> cache(host.size());
  ASSERT_EQ(cudaMemcpy(cache.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice),
            cudaSuccess);
  bench::DeviceBuffer<std::uint8_t> out(kTileBytes);
  ASSERT_EQ(cudaMemset(out.data(), 0, kTileBytes), cudaSuccess);  // 0 is no cache value

  const PageLayout layout = GetParam();
  const PageCopy copy = encode_page_copy(layout, cache.data(), rows, kCopiedPage);
  ASSERT_EQ(copy.encoded, CUDA_SUCCESS)
      << name_of(layout) << ": cuTensorMapEncodeTiled refused the tensor map (CUresult "
      << copy.encoded << ")";

  BoxCoordinates boxes{.count = static_cast<int>(copy.boxes.size()), .values = {}};
  for (int i = 0; i < boxes.count; ++i) {
    for (int d = 0; d < copy.rank; ++d) boxes.values[i][d] = copy.boxes[i][d];
  }
  const int smem_bytes = kTileBytes + 8;  // the tile, then its mbarrier
  ASSERT_EQ(cudaFuncSetAttribute(copy_page_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem_bytes),
            cudaSuccess);
  copy_page_kernel<<<1, 128, smem_bytes>>>(copy.map, copy.rank, boxes, out.data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<std::uint16_t> landed(kTileBytes / 2);
  ASSERT_EQ(cudaMemcpy(landed.data(), out.data(), kTileBytes, cudaMemcpyDeviceToHost),
            cudaSuccess);
  int wrong = 0;
  std::string first_wrong;
  for (int offset = 0; offset < kTileBytes; offset += 2) {
    const auto [row, column] = source_of(layout, offset);
    const std::uint16_t expected = value_at(kCopiedPage * kPageRows + row, column);
    if (landed[offset / 2] != expected && wrong++ == 0) {
      first_wrong = "byte " + std::to_string(offset) + ": expected row " + std::to_string(row) +
                    " column " + std::to_string(column) + " (" + std::to_string(expected) +
                    "), got " + std::to_string(landed[offset / 2]);
    }
  }
  EXPECT_EQ(wrong, 0) << name_of(layout) << ": " << wrong << " of " << kTileBytes / 2
                      << " elements misplaced; first: " << first_wrong;
}

INSTANTIATE_TEST_SUITE_P(Layouts, TmaPageLayout,
                         ::testing::Values(PageLayout::kSwizzledChunks9Boxes,
                                           PageLayout::kSwizzledChunksOneBox,
                                           PageLayout::kCoreMatricesOneBox),
                         [](const auto& info) { return std::string(name_of(info.param)); });

}  // namespace
}  // namespace mlalab
