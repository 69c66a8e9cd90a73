// Can TMA feed the wgmma kernels at page size 1? There a 64-token tile's rows lie anywhere in
// the cache, so the kernels copy it by cp.async, 16 bytes per instruction from 128 copy
// threads (tile_copies.cuh, copy_tile_async), and at 128 heads the call is 22 % slower than at
// page 64 (docs/results/2026-12-05-h200-v55/landed/targets/). A box of one row × one 128-byte
// span lands where the tile's swizzled layout wants it if TMA's 128-byte swizzle follows the
// shared-memory address (its bits 7-9 XORed into bits 4-6), as the 1,024-byte alignment rule
// suggests: 9 boxes a token, 576 a tile, where page 64 takes 3. Whether the copy engine keeps
// up with that many small boxes is what this measures, against cp.async, before a kernel is
// built on it.
//
// One CTA per SM: copy threads fill a ring of 72 KB stages with 64-token tiles whose rows are
// random rows of a 2 GB cache (page 1; page 64 for the reference: random whole pages); one
// consumer thread waits for each tile, holds it `hold` cycles (the MMA warps' landed → freed),
// then frees it. The patterns, every one landing the tile in the kernels' layout:
//   page64:        the kernels' page-64 path: 3 boxes ([64 columns, 64 rows, 4 spans] twice,
//                  1 span once), one issuing thread;
//   cpasync:       page 1 as the kernels do it today: copy_tile_async over 128 threads, each
//                  arriving on the stage's barrier when its copies land (.noinc);
//   rows-1thread:  page 1 by TMA, 576 boxes [64 columns, 1 row, 1 span] from one thread;
//   rows-warp:     the same boxes from one warp: lane l issues tokens l and l + 32;
//   rows-4warps:   from the 128 copy threads: thread i token i % 64, spans 0-3 (i < 64, the
//                  kernels' first piece) or 4-8;
//   rows-4w-nopr:  rows-4warps without L2 promotion (every other map: 256-byte promotion, as
//                  the kernels' maps today).
// Before the timings a check lands one page's 64 rows three ways (page64 boxes, rows-4warps,
// cpasync) and counts the bytes where the row boxes or cp.async differ from the page64 tile.
// The figure is bytes landed per second over the GPU, the median of 9 launches.
//
// Build and run (sm_90a; from the repository root):
//   nvcc -std=c++20 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Isrc \
//     -Xcompiler -static-libstdc++,-static-libgcc -o build-d/row_boxes \
//     docs/results/2026-12-07-row-boxes/row_boxes.cu src/kernels/wgmma/tensor_maps.cpp &&
//   build-d/row_boxes
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
#include "kernels/wgmma/tensor_maps.h"
#include "kernels/wgmma/tile_copies.cuh"

namespace wg = mlalab::kernels::wgmma;
using mlalab::bf16;
using mlalab::kernels::portable::smem_address;

constexpr int kRows = 64;  // tokens per tile (and per page at page 64)
constexpr int kSpans = 9;  // V3: 576 columns
constexpr int kRowBytes = kSpans * wg::kSpanBytes;  // 1,152
constexpr int kTileBytes = kRows * kRowBytes;       // 73,728
constexpr int kSpanStride = wg::span_stride_bytes(kRows);
constexpr int kFirstSpans = wg::kFirstPieceSpans;  // 4
constexpr int kStages = 2;
constexpr int kCopyThreads = wg::kCopyThreads;  // 128
constexpr int kThreads = kCopyThreads + 32;     // and one consumer warp

enum class Pattern { kPage64, kCpAsync, kRows1Thread, kRowsWarp, kRows4Warps, kRows4WarpsNoPr };
const char* name_of(Pattern p) {
  switch (p) {
    case Pattern::kPage64: return "page64";
    case Pattern::kCpAsync: return "cpasync";
    case Pattern::kRows1Thread: return "rows-1thread";
    case Pattern::kRowsWarp: return "rows-warp";
    case Pattern::kRows4Warps: return "rows-4warps";
    case Pattern::kRows4WarpsNoPr: return "rows-4w-nopr";
  }
  return "?";
}

struct Maps {
  CUtensorMap page_spans4;  // [64, 64 rows, 9 spans, pages], box [64, 64, 4, 1]
  CUtensorMap page_span1;   // box [64, 64, 1, 1]
  CUtensorMap row_span;     // [64, 1 row, 9 spans, rows], box [64, 1, 1, 1]
  CUtensorMap row_span_np;  // the same without L2 promotion
};

// Where `rows` (the tile's 64 cache rows) or, at page 64, `page` are.
struct TileSource {
  const int* rows;
  int page;
};

#if defined(__CUDA_ARCH__)  // the primitives exist in device code only
// The boxes of token `t` (cache row `row`), spans [first, end), on `landed`; the caller's
// expect_tx covers them.
__device__ __forceinline__ void copy_row_spans(std::uint32_t tile, const CUtensorMap* map,
                                               int t, int row, int first, int end,
                                               std::uint32_t landed) {
  for (int span = first; span < end; ++span) {
    wg::tma_load_4d(tile + span * kSpanStride + t * wg::kSpanBytes, map, 0, 0, span, row,
                    landed);
  }
}

// Copy thread `c` (0..127) lands one tile in `tile` on `landed` (initialised for 128
// arrivals: every copy thread arrives once per tile).
__device__ void copy_tile(const Maps& maps, Pattern pattern, const bf16* cache, TileSource src,
                          std::uint32_t tile, std::uint32_t landed) {
  const int c = threadIdx.x;
  switch (pattern) {
    case Pattern::kPage64:
      if (c == 0) {
        wg::mbarrier_expect_tx(landed, kTileBytes);
        wg::tma_load_4d(tile, &maps.page_spans4, 0, 0, 0, src.page, landed);
        wg::tma_load_4d(tile + 4 * kSpanStride, &maps.page_spans4, 0, 0, 4, src.page, landed);
        wg::tma_load_4d(tile + 8 * kSpanStride, &maps.page_span1, 0, 0, 8, src.page, landed);
      }
      wg::mbarrier_arrive(landed);
      break;
    case Pattern::kCpAsync: {
      constexpr int kGroups = wg::copy_groups_per_warp<kRows>();
      const bf16* sources[kGroups];
#pragma unroll
      for (int i = 0; i < kGroups; ++i) {
        sources[i] = cache + static_cast<std::size_t>(src.rows[wg::copy_row(i)]) * kSpans *
                                 wg::kSpanElems;
      }
      wg::copy_tile_async<kRows>(tile, kSpans * wg::kSpanElems, cache, sources);
      wg::mbarrier_arrive_on_copies(landed);
      break;
    }
    case Pattern::kRows1Thread:
      if (c == 0) {
        wg::mbarrier_expect_tx(landed, kTileBytes);
        for (int t = 0; t < kRows; ++t) {
          copy_row_spans(tile, &maps.row_span, t, src.rows[t], 0, kSpans, landed);
        }
      }
      wg::mbarrier_arrive(landed);
      break;
    case Pattern::kRowsWarp:
      if (c < 32) {
        wg::mbarrier_expect_tx(landed, 2 * kRowBytes);
        copy_row_spans(tile, &maps.row_span, c, src.rows[c], 0, kSpans, landed);
        copy_row_spans(tile, &maps.row_span, c + 32, src.rows[c + 32], 0, kSpans, landed);
      }
      wg::mbarrier_arrive(landed);
      break;
    case Pattern::kRows4Warps:
    case Pattern::kRows4WarpsNoPr: {
      const CUtensorMap* map =
          pattern == Pattern::kRows4Warps ? &maps.row_span : &maps.row_span_np;
      const int t = c % kRows;
      const int first = c < kRows ? 0 : kFirstSpans;
      const int end = c < kRows ? kFirstSpans : kSpans;
      wg::mbarrier_expect_tx(landed, (end - first) * wg::kSpanBytes);
      copy_row_spans(tile, map, t, src.rows[t], first, end, landed);
      wg::mbarrier_arrive(landed);
      break;
    }
  }
}

__device__ void init_ring(std::uint64_t (&landed)[kStages], std::uint64_t (&freed)[kStages]) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      wg::mbarrier_init(smem_address(&landed[s]), kCopyThreads);
      wg::mbarrier_init(smem_address(&freed[s]), 1);
    }
    wg::fence_async_proxy();
  }
  __syncthreads();
}
#endif

__global__ void __launch_bounds__(kThreads, 1)
    land_tiles(const __grid_constant__ Maps maps, const bf16* cache, const int* order,
               int num_items, int tiles_per_cta, long long hold_cycles, Pattern pattern) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(1024) unsigned char stage_bytes[];
  __shared__ __align__(8) std::uint64_t landed[kStages];
  __shared__ __align__(8) std::uint64_t freed[kStages];
  init_ring(landed, freed);
  const int first = blockIdx.x * tiles_per_cta;
  if (threadIdx.x < kCopyThreads) {
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % kStages;
      if (j >= kStages) wg::mbarrier_wait(smem_address(&freed[s]), (j / kStages - 1) & 1);
      // page 64: order[] holds pages; page 1: rows, 64 per tile.
      const int item = (first + j) % (pattern == Pattern::kPage64 ? num_items : num_items / kRows);
      const TileSource src{order + static_cast<std::size_t>(item) * kRows, order[item]};
      copy_tile(maps, pattern, cache, src, smem_address(stage_bytes + s * kTileBytes),
                smem_address(&landed[s]));
    }
    mlalab::kernels::portable::cp_async_wait<0>();
  } else if (threadIdx.x == kCopyThreads) {
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % kStages;
      wg::mbarrier_wait(smem_address(&landed[s]), (j / kStages) & 1);
      wg::fence_async_proxy();  // cp.async wrote through the generic proxy
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

// Lands page 0 (rows 0..63) as page64 into stage 0, then by `pattern` into stage 1, and
// counts the bytes that differ.
__global__ void __launch_bounds__(kThreads, 1)
    check_layout(const __grid_constant__ Maps maps, const bf16* cache, const int* rows,
                 Pattern pattern, int* mismatches) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(1024) unsigned char stage_bytes[];
  __shared__ __align__(8) std::uint64_t landed[kStages];
  __shared__ __align__(8) std::uint64_t freed[kStages];
  init_ring(landed, freed);
  if (threadIdx.x < kCopyThreads) {
    copy_tile(maps, Pattern::kPage64, cache, {rows, 0}, smem_address(stage_bytes),
              smem_address(&landed[0]));
    copy_tile(maps, pattern, cache, {rows, 0}, smem_address(stage_bytes + kTileBytes),
              smem_address(&landed[1]));
    wg::mbarrier_wait(smem_address(&landed[0]), 0);
    wg::mbarrier_wait(smem_address(&landed[1]), 0);
  }
  __syncthreads();
  int differ = 0;
  for (int i = threadIdx.x; i < kTileBytes; i += blockDim.x) {
    differ += stage_bytes[i] != stage_bytes[kTileBytes + i];
  }
  atomicAdd(mismatches, differ);
#endif
}

// The kernels' four-dimensional view (tensor_maps.cpp): [64 columns, page rows, spans, pages].
void encode(CUtensorMap* map, void* cache, int page_rows, std::uint64_t pages, int box_rows,
            int box_spans, CUtensorMapL2promotion promotion) {
  const cuuint64_t dims[4] = {64, static_cast<cuuint64_t>(page_rows), kSpans, pages};
  const cuuint64_t strides[3] = {kRowBytes, wg::kSpanBytes,
                                 static_cast<cuuint64_t>(page_rows) * kRowBytes};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows),
                             static_cast<cuuint32_t>(box_spans), 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const auto encoder = wg::tensor_map_encoder();
  if (encoder == nullptr) {
    std::fprintf(stderr, "no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  const CUresult result =
      encoder(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, cache, dims, strides, box,
              element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
              promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(result));
    std::exit(1);
  }
}

int main() {
  cudaDeviceProp props{};
  MLALAB_CUDA_TRY(cudaGetDeviceProperties(&props, 0));
  const int num_pages = 28 * 1024;  // 2.06 GB: far beyond the L2
  const int num_rows = num_pages * kRows;
  const std::size_t bytes = static_cast<std::size_t>(num_pages) * kTileBytes;
  bf16* cache = nullptr;
  MLALAB_CUDA_TRY(cudaMalloc(&cache, bytes));
  {  // every byte different from its neighbours', so that a misplaced chunk shows
    std::vector<std::uint16_t> values(bytes / 2);
    std::mt19937 random(11);
    for (auto& v : values) v = static_cast<std::uint16_t>(random());
    MLALAB_CUDA_TRY(cudaMemcpy(cache, values.data(), bytes, cudaMemcpyHostToDevice));
  }
  std::mt19937 random(7);
  std::vector<int> pages(num_pages);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), random);
  std::vector<int> rows(num_rows);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), random);
  int* page_order = nullptr;
  int* row_order = nullptr;
  int* first_page_rows = nullptr;
  int* mismatches = nullptr;
  MLALAB_CUDA_TRY(cudaMalloc(&page_order, num_pages * sizeof(int)));
  MLALAB_CUDA_TRY(cudaMalloc(&row_order, num_rows * sizeof(int)));
  MLALAB_CUDA_TRY(cudaMalloc(&first_page_rows, kRows * sizeof(int)));
  MLALAB_CUDA_TRY(cudaMalloc(&mismatches, sizeof(int)));
  MLALAB_CUDA_TRY(cudaMemcpy(page_order, pages.data(), num_pages * sizeof(int),
                             cudaMemcpyHostToDevice));
  MLALAB_CUDA_TRY(cudaMemcpy(row_order, rows.data(), num_rows * sizeof(int),
                             cudaMemcpyHostToDevice));
  std::vector<int> page0_rows(kRows);
  std::iota(page0_rows.begin(), page0_rows.end(), 0);
  MLALAB_CUDA_TRY(cudaMemcpy(first_page_rows, page0_rows.data(), kRows * sizeof(int),
                             cudaMemcpyHostToDevice));

  Maps maps{};
  encode(&maps.page_spans4, cache, kRows, num_pages, kRows, 4, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  encode(&maps.page_span1, cache, kRows, num_pages, kRows, 1, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  encode(&maps.row_span, cache, 1, num_rows, 1, 1, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  encode(&maps.row_span_np, cache, 1, num_rows, 1, 1, CU_TENSOR_MAP_L2_PROMOTION_NONE);

  const int smem = kStages * kTileBytes;
  MLALAB_CUDA_TRY(
      cudaFuncSetAttribute(land_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  MLALAB_CUDA_TRY(
      cudaFuncSetAttribute(check_layout, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::printf("%s, %d SMs, L2 %d MiB; 64-token tiles of %d B, %d stages, one CTA per SM\n\n",
              props.name, props.multiProcessorCount, props.l2CacheSize >> 20, kTileBytes,
              kStages);

  int failed = 0;
  for (const Pattern pattern : {Pattern::kCpAsync, Pattern::kRows1Thread, Pattern::kRowsWarp,
                                Pattern::kRows4Warps, Pattern::kRows4WarpsNoPr}) {
    MLALAB_CUDA_TRY(cudaMemset(mismatches, 0, sizeof(int)));
    check_layout<<<1, kThreads, smem>>>(maps, cache, first_page_rows, pattern, mismatches);
    MLALAB_CUDA_TRY(cudaGetLastError());
    int differ = -1;
    MLALAB_CUDA_TRY(cudaMemcpy(&differ, mismatches, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("layout check, %-12s against page64: %d of %d bytes differ\n", name_of(pattern),
                differ, kTileBytes);
    failed += differ != 0;
  }
  std::printf("\n%-13s %6s %9s %12s\n", "pattern", "hold", "ms", "landed TB/s");

  cudaEvent_t start, stop;
  MLALAB_CUDA_TRY(cudaEventCreate(&start));
  MLALAB_CUDA_TRY(cudaEventCreate(&stop));
  const int ctas = props.multiProcessorCount;
  const int tiles_per_cta = 200;
  for (const long long hold : {0LL, 2100LL, 3800LL}) {
    for (const Pattern pattern : {Pattern::kPage64, Pattern::kCpAsync, Pattern::kRows1Thread,
                                  Pattern::kRowsWarp, Pattern::kRows4Warps,
                                  Pattern::kRows4WarpsNoPr}) {
      const bool by_page = pattern == Pattern::kPage64;
      std::vector<double> samples;
      for (int run = 0; run < 11; ++run) {
        MLALAB_CUDA_TRY(cudaEventRecord(start));
        land_tiles<<<ctas, kThreads, smem>>>(maps, cache, by_page ? page_order : row_order,
                                             by_page ? num_pages : num_rows, tiles_per_cta, hold,
                                             pattern);
        MLALAB_CUDA_TRY(cudaGetLastError());
        MLALAB_CUDA_TRY(cudaEventRecord(stop));
        MLALAB_CUDA_TRY(cudaEventSynchronize(stop));
        float ms = 0;
        MLALAB_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
        if (run >= 2) samples.push_back(ms);
      }
      const double ms = mlalab::median(std::move(samples));
      const double landed = static_cast<double>(ctas) * tiles_per_cta * kTileBytes;
      std::printf("%-13s %6lld %9.3f %12.2f\n", name_of(pattern), hold, ms,
                  landed / (ms * 1e-3) / 1e12);
      std::fflush(stdout);
    }
  }
  MLALAB_CUDA_TRY(cudaFree(mismatches));
  MLALAB_CUDA_TRY(cudaFree(first_page_rows));
  MLALAB_CUDA_TRY(cudaFree(row_order));
  MLALAB_CUDA_TRY(cudaFree(page_order));
  MLALAB_CUDA_TRY(cudaFree(cache));
  return failed == 0 ? 0 : 1;
}
