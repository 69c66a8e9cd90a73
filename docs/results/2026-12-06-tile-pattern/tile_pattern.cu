// Does the order in which TMA reads a KV tile cost HBM bandwidth? The H = 16 kernels read the
// cache at 82-89 % of the streaming rate (docs/perf-notes.md, "Where the targets stand"), and
// the copy path's ceiling (../2026-12-05-l2-ceiling/) was measured with contiguous bulk copies
// only, which land at the streaming rate. The kernels copy a page of 64 rows × 1,152 bytes as
// boxes of one 128-byte span × 64 rows (tensor_maps.h): each box reads 128 bytes of every row,
// 1,152 bytes apart, and the tile's nine spans sweep the page's 72 KB nine times.
//
// One CTA per SM: a producer thread copies tiles (pages in a random order, as a block table
// scatters them) into a ring of `stages` 72 KB stages, a consumer thread waits for each to
// land, holds it for `hold` cycles (the MMA warps' landed → freed, ~2,100 cycles at 16 heads),
// then frees it. Four ways to read the same page, all 73,728 bytes:
//   bulk:      one cp.async.bulk of the page (contiguous, no swizzle);
//   spans:     the kernels' boxes: [64 columns, 64 rows, 4 spans] twice and [.., 1 span] once;
//   rowgroups: one box over a five-dimensional view, [64 columns, 8 rows, 9 spans, 8 row
//              groups]: the page read 9 KB (8 whole rows) at a time, landing as 8-row
//              swizzle atoms that wgmma can read (span after span within each row group);
//   rowpieces: the same view in the kernels' two pieces, boxes of spans 0-3 and 4-8: each
//              row group's first 512 bytes of 8 rows, then its last 640;
//   rows:      one box over [64 columns, 9 spans, rows]: the page read front to back (its
//              layout in shared memory is not one wgmma reads; the order's ceiling);
//   spans-nopr, rows-nosw: spans without L2 promotion, rows without swizzle (every other
//              tensor map here has the kernels' settings: 128-byte swizzle, 256-byte L2
//              promotion), added after the first H200 run to tell the two apart.
// The figure is bytes landed per second over the GPU, the median of 9 launches.
//
// Build and run (sm_90a; from the repository root):
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -o /tmp/tile_pattern \
//     docs/results/2026-12-06-tile-pattern/tile_pattern.cu && /tmp/tile_pattern
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "bench/cuda_raii.h"
#include "core/median.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/primitives.cuh"

namespace wg = mlalab::kernels::wgmma;
using mlalab::kernels::portable::smem_address;


constexpr int kRows = 64;             // tokens per page and tile
constexpr int kSpans = 9;             // V3: 576 columns
constexpr int kSpanBytes = 128;
constexpr int kRowBytes = kSpans * kSpanBytes;  // 1,152
constexpr int kTileBytes = kRows * kRowBytes;   // 73,728
constexpr int kMaxStages = 3;

enum class Pattern { kBulk, kSpans, kRowGroups, kRowPieces, kRows, kSpansNoPromotion, kRowsNoSwizzle };
const char* name_of(Pattern p) {
  switch (p) {
    case Pattern::kBulk: return "bulk";
    case Pattern::kSpans: return "spans";
    case Pattern::kRowGroups: return "rowgroups";
    case Pattern::kRowPieces: return "rowpieces";
    case Pattern::kRows: return "rows";
    case Pattern::kSpansNoPromotion: return "spans-nopr";
    case Pattern::kRowsNoSwizzle: return "rows-nosw";
  }
  return "?";
}

struct Maps {
  CUtensorMap spans4;    // [64, 64 rows, 9 spans, pages], box [64, 64, 4, 1]
  CUtensorMap span1;     // the same view, box [64, 64, 1, 1]
  CUtensorMap rowgroup;  // [64, 8 rows, 9 spans, 8 groups, pages], box [64, 8, 9, 8, 1]
  CUtensorMap rowfirst;  // the same view, box [64, 8, 4, 8, 1]
  CUtensorMap rowrest;   // and [64, 8, 5, 8, 1]
  CUtensorMap rows;      // [64, 9 spans, all rows], box [64, 9, 64]
  CUtensorMap spans4_np;  // spans4 without L2 promotion
  CUtensorMap span1_np;
  CUtensorMap rows_nosw;  // rows without swizzle
};

__device__ __forceinline__ void tma_load_3d(std::uint32_t destination, const void* map, int c0,
                                            int c1, int c2, std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(destination),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(barrier)
      : "memory");
}
__device__ __forceinline__ void tma_load_5d(std::uint32_t destination, const void* map, int c0,
                                            int c1, int c2, int c3, int c4,
                                            std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(destination),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(barrier)
      : "memory");
}

__global__ void land_tiles(const __grid_constant__ Maps maps, const char* cache,
                           const int* pages, int num_pages, int tiles_per_cta, int stages,
                           long long hold_cycles, Pattern pattern) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // the primitives exist in device code only
  extern __shared__ __align__(1024) unsigned char stage_bytes[];
  __shared__ __align__(8) std::uint64_t landed[kMaxStages];
  __shared__ __align__(8) std::uint64_t freed[kMaxStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      wg::mbarrier_init(smem_address(&landed[s]), 1);
      wg::mbarrier_init(smem_address(&freed[s]), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x % 32 != 0) return;
  const int first = blockIdx.x * tiles_per_cta;
  if (threadIdx.x == 0) {  // the producer
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % stages;
      if (j >= stages) wg::mbarrier_wait(smem_address(&freed[s]), (j / stages - 1) & 1);
      const int page = pages[(first + j) % num_pages];
      const std::uint32_t barrier = smem_address(&landed[s]);
      const std::uint32_t tile = smem_address(stage_bytes + s * kTileBytes);
      wg::mbarrier_expect_tx(barrier, kTileBytes);
      wg::mbarrier_arrive(barrier);
      switch (pattern) {
        case Pattern::kBulk:
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
              " [%0], [%1], %2, [%3];\n" ::"r"(tile),
              "l"(cache + static_cast<std::size_t>(page) * kTileBytes), "r"(kTileBytes),
              "r"(barrier)
              : "memory");
          break;
        case Pattern::kSpans:
          wg::tma_load_4d(tile, &maps.spans4, 0, 0, 0, page, barrier);
          wg::tma_load_4d(tile + 4 * kRows * kSpanBytes, &maps.spans4, 0, 0, 4, page, barrier);
          wg::tma_load_4d(tile + 8 * kRows * kSpanBytes, &maps.span1, 0, 0, 8, page, barrier);
          break;
        case Pattern::kRowGroups:
          tma_load_5d(tile, &maps.rowgroup, 0, 0, 0, 0, page, barrier);
          break;
        case Pattern::kRowPieces:
          tma_load_5d(tile, &maps.rowfirst, 0, 0, 0, 0, page, barrier);
          tma_load_5d(tile + 4 * kRows * kSpanBytes, &maps.rowrest, 0, 0, 4, 0, page, barrier);
          break;
        case Pattern::kRows:
          tma_load_3d(tile, &maps.rows, 0, 0, page * kRows, barrier);
          break;
        case Pattern::kSpansNoPromotion:
          wg::tma_load_4d(tile, &maps.spans4_np, 0, 0, 0, page, barrier);
          wg::tma_load_4d(tile + 4 * kRows * kSpanBytes, &maps.spans4_np, 0, 0, 4, page,
                          barrier);
          wg::tma_load_4d(tile + 8 * kRows * kSpanBytes, &maps.span1_np, 0, 0, 8, page, barrier);
          break;
        case Pattern::kRowsNoSwizzle:
          tma_load_3d(tile, &maps.rows_nosw, 0, 0, page * kRows, barrier);
          break;
      }
    }
  } else if (threadIdx.x == 32) {  // the consumer
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % stages;
      wg::mbarrier_wait(smem_address(&landed[s]), (j / stages) & 1);
      if (hold_cycles > 0) {
        const long long until = clock64() + hold_cycles;
        while (clock64() < until) {
        }
      }
      wg::mbarrier_arrive(smem_address(&freed[s]));
    }
  }
#endif
}

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult query{};
  MLALAB_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &found, 12000,
                                         cudaEnableDefault, &query));
  if (query != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(found);
}

void encode(CUtensorMap* map, void* base, int rank, const cuuint64_t* dims,
            const cuuint64_t* strides, const cuuint32_t* box,
            CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult result = encoder()(
      map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, base, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled (rank %d) failed: %d\n", rank,
                 static_cast<int>(result));
    std::exit(1);
  }
}

Maps make_maps(void* cache, int num_pages) {
  Maps maps{};
  const cuuint64_t pages = static_cast<cuuint64_t>(num_pages);
  {
    const cuuint64_t dims[4] = {64, kRows, kSpans, pages};
    const cuuint64_t strides[3] = {kRowBytes, kSpanBytes, kTileBytes};
    const cuuint32_t box4[4] = {64, kRows, 4, 1};
    const cuuint32_t box1[4] = {64, kRows, 1, 1};
    encode(&maps.spans4, cache, 4, dims, strides, box4);
    encode(&maps.span1, cache, 4, dims, strides, box1);
    encode(&maps.spans4_np, cache, 4, dims, strides, box4, CU_TENSOR_MAP_SWIZZLE_128B,
           CU_TENSOR_MAP_L2_PROMOTION_NONE);
    encode(&maps.span1_np, cache, 4, dims, strides, box1, CU_TENSOR_MAP_SWIZZLE_128B,
           CU_TENSOR_MAP_L2_PROMOTION_NONE);
  }
  {
    const cuuint64_t dims[5] = {64, 8, kSpans, kRows / 8, pages};
    const cuuint64_t strides[4] = {kRowBytes, kSpanBytes, 8 * kRowBytes, kTileBytes};
    const cuuint32_t box[5] = {64, 8, kSpans, kRows / 8, 1};
    const cuuint32_t first[5] = {64, 8, 4, kRows / 8, 1};
    const cuuint32_t rest[5] = {64, 8, kSpans - 4, kRows / 8, 1};
    encode(&maps.rowgroup, cache, 5, dims, strides, box);
    encode(&maps.rowfirst, cache, 5, dims, strides, first);
    encode(&maps.rowrest, cache, 5, dims, strides, rest);
  }
  {
    const cuuint64_t dims[3] = {64, kSpans, pages * kRows};
    const cuuint64_t strides[2] = {kSpanBytes, kRowBytes};
    const cuuint32_t box[3] = {64, kSpans, kRows};
    encode(&maps.rows, cache, 3, dims, strides, box);
    encode(&maps.rows_nosw, cache, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
  }
  return maps;
}

int main() {
  cudaDeviceProp props{};
  MLALAB_CUDA_TRY(cudaGetDeviceProperties(&props, 0));
  int sm_clock_khz = 0;
  MLALAB_CUDA_TRY(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, 0));
  const int num_pages = 28 * 1024;  // 2.06 GB: far beyond the L2
  char* cache = nullptr;
  MLALAB_CUDA_TRY(cudaMalloc(&cache, static_cast<std::size_t>(num_pages) * kTileBytes));
  MLALAB_CUDA_TRY(cudaMemset(cache, 0x5a, static_cast<std::size_t>(num_pages) * kTileBytes));
  std::vector<int> order(num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  int* pages = nullptr;
  MLALAB_CUDA_TRY(cudaMalloc(&pages, num_pages * sizeof(int)));
  MLALAB_CUDA_TRY(cudaMemcpy(pages, order.data(), num_pages * sizeof(int), cudaMemcpyHostToDevice));
  const Maps maps = make_maps(cache, num_pages);

  // Every stage count with the same shared memory: one CTA per SM.
  const int smem = kMaxStages * kTileBytes;
  MLALAB_CUDA_TRY(cudaFuncSetAttribute(land_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int tiles_per_cta = 200;
  std::printf("%s, %d SMs, SM clock up to %d MHz, L2 %d MiB; pages of %d B in a random "
              "order, %d per CTA\n\n",
              props.name, props.multiProcessorCount, sm_clock_khz / 1000,
              props.l2CacheSize >> 20, kTileBytes, tiles_per_cta);
  std::printf("%-10s %5s %7s %6s %9s %12s\n", "pattern", "ctas", "stages", "hold", "ms",
              "landed TB/s");
  cudaEvent_t start, stop;
  MLALAB_CUDA_TRY(cudaEventCreate(&start));
  MLALAB_CUDA_TRY(cudaEventCreate(&stop));
  const Pattern patterns[] = {Pattern::kBulk,      Pattern::kSpans,
                              Pattern::kRowGroups, Pattern::kRowPieces,
                              Pattern::kRows,      Pattern::kSpansNoPromotion,
                              Pattern::kRowsNoSwizzle};
  for (const int ctas : {props.multiProcessorCount, 128}) {
    for (const long long hold : {0LL, 2100LL}) {
      for (const int stages : {1, 2, 3}) {
        for (const Pattern pattern : patterns) {
          std::vector<double> samples;
          for (int run = 0; run < 11; ++run) {
            MLALAB_CUDA_TRY(cudaEventRecord(start));
            land_tiles<<<ctas, 64, smem>>>(maps, cache, pages, num_pages, tiles_per_cta, stages,
                                           hold, pattern);
            MLALAB_CUDA_TRY(cudaGetLastError());
            MLALAB_CUDA_TRY(cudaEventRecord(stop));
            MLALAB_CUDA_TRY(cudaEventSynchronize(stop));
            float ms = 0;
            MLALAB_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
            if (run >= 2) samples.push_back(ms);
          }
          const double ms = mlalab::median(std::move(samples));
          const double bytes = static_cast<double>(ctas) * tiles_per_cta * kTileBytes;
          std::printf("%-10s %5d %7d %6lld %9.3f %12.2f\n", name_of(pattern), ctas, stages, hold,
                      ms, bytes / (ms * 1e-3) / 1e12);
          std::fflush(stdout);
        }
      }
    }
  }
  MLALAB_CUDA_TRY(cudaFree(pages));
  MLALAB_CUDA_TRY(cudaFree(cache));
  return 0;
}
