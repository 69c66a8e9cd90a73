// What does a 16-head call's launch cost with nothing in it but the copies? At 16 heads the
// swapped kernel (wgmma_h16_t64_w4_s2) reads the cache at 55 / 80 / 89 / 96 % of the streaming
// rate at batch 8 / 32 / 64 / 128 on an H100 (docs/perf-notes.md, "Where the targets stand"),
// and issue 12 asks for batch 8 in 14 µs on the H200 (17.8 there). The steady state is not the
// limit (../2026-12-06-tile-pattern/: 200 tiles per CTA land at the streaming rate with the
// kernel's boxes and ring); a call of 4-64 tiles per CTA pays the launch, the ramp, the first
// tile's latency and the last tile's, which no measurement has separated from the kernel's own
// costs (q, the MMAs on the critical path, partial rows, the combine).
//
// The floor: the kernel's own grid at each batch (the splits `mlalab bench` reports for it,
// V3, 4,096 tokens: one CTA per (sequence, split)), each CTA copying its tiles — random pages
// of 64 rows × 1,152 B, the kernel's three boxes per tile from a tensor map without L2
// promotion — through a ring of two 72 KB stages, a thread freeing each stage `hold` cycles
// after it lands (0, or ~ the MMA warps' time per tile at 16 heads). Timed as `mlalab bench`
// times a call: one CUDA graph of R launches, each reading pages no other launch of the graph
// reads, R × bytes ≥ 4 × L2; one sample is graph time / R, the figure the median of 20.
// The "empty" row is a launch of 128 CTAs that copy nothing: the graph's cost per launch.
//
// Build and run (sm_90a; from the repository root):
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -o /tmp/launch_floor \
//     docs/results/2026-12-07-launch-floor/launch_floor.cu src/kernels/wgmma/tensor_maps.cpp \
//     && /tmp/launch_floor
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
#include "kernels/wgmma/tensor_maps.h"

namespace wg = mlalab::kernels::wgmma;
using mlalab::kernels::portable::smem_address;

constexpr int kRows = 64;             // tokens per page and tile
constexpr int kSpans = 9;             // V3: 576 columns
constexpr int kSpanBytes = 128;
constexpr int kRowBytes = kSpans * kSpanBytes;  // 1,152
constexpr int kTileBytes = kRows * kRowBytes;   // 73,728
constexpr int kStages = 2;

struct Maps {
  CUtensorMap spans4;  // [64, 64 rows, 9 spans, pages], box [64, 64, 4, 1]
  CUtensorMap span1;   // the same view, box [64, 64, 1, 1] (the rope span)
};

// CTA c copies pages[first + c · tiles_per_cta + j], j < tiles_per_cta.
__global__ void copy_tiles(const __grid_constant__ Maps maps, const int* pages, int first,
                           int tiles_per_cta, long long hold_cycles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // the primitives exist in device code only
  extern __shared__ __align__(1024) unsigned char stage_bytes[];
  __shared__ __align__(8) std::uint64_t landed[kStages];
  __shared__ __align__(8) std::uint64_t freed[kStages];
  if (tiles_per_cta == 0) return;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      wg::mbarrier_init(smem_address(&landed[s]), 1);
      wg::mbarrier_init(smem_address(&freed[s]), 1);
    }
    wg::fence_barrier_init();
  }
  __syncthreads();
  const int* own_pages = pages + first + blockIdx.x * tiles_per_cta;
  if (threadIdx.x == 0) {  // the copy thread
    wg::prefetch_tensor_map(&maps.spans4);
    wg::prefetch_tensor_map(&maps.span1);
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % kStages;
      if (j >= kStages) wg::mbarrier_wait(smem_address(&freed[s]), (j / kStages - 1) & 1);
      const int page = own_pages[j];
      const std::uint32_t barrier = smem_address(&landed[s]);
      const std::uint32_t tile = smem_address(stage_bytes + s * kTileBytes);
      wg::mbarrier_expect_tx(barrier, kTileBytes);
      wg::mbarrier_arrive(barrier);
      wg::tma_load_4d(tile, &maps.spans4, 0, 0, 0, page, barrier);
      wg::tma_load_4d(tile + 4 * kRows * kSpanBytes, &maps.spans4, 0, 0, 4, page, barrier);
      wg::tma_load_4d(tile + 8 * kRows * kSpanBytes, &maps.span1, 0, 0, 8, page, barrier);
    }
  } else if (threadIdx.x == 32) {  // the thread that stands for the MMA warps
    for (int j = 0; j < tiles_per_cta; ++j) {
      const int s = j % kStages;
      wg::mbarrier_wait(smem_address(&landed[s]), (j / kStages) & 1);
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

// The kernels' own maps (tensor_maps.cpp): boxes of 64 rows and four spans, and the rope span's.
Maps make_maps(const void* cache, int num_pages) {
  mlalab::DecodeParams params{};
  params.kv_cache = static_cast<const mlalab::bf16*>(cache);
  params.d_qk = kSpans * 64;
  params.page_size = kRows;
  params.num_pages = num_pages;
  params.num_heads = 16;
  mlalab::set_contiguous_strides(params);
  Maps maps{};
  if (!wg::encode_kv_tile_map(params, kRows, 4, &maps.spans4) ||
      !wg::encode_kv_tile_map(params, kRows, 1, &maps.span1)) {
    std::fprintf(stderr, "no tensor map for the cache\n");
    std::exit(1);
  }
  return maps;
}

struct Shape {
  const char* name;
  int ctas;
  int tiles_per_cta;
};

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
  MLALAB_CUDA_TRY(
      cudaMemcpy(pages, order.data(), num_pages * sizeof(int), cudaMemcpyHostToDevice));
  const Maps maps = make_maps(cache, num_pages);
  const int smem = kStages * kTileBytes;
  MLALAB_CUDA_TRY(
      cudaFuncSetAttribute(copy_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaStream_t stream = nullptr;
  MLALAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  MLALAB_CUDA_TRY(cudaEventCreate(&start));
  MLALAB_CUDA_TRY(cudaEventCreate(&stop));

  std::printf("%s, %d SMs, SM clock up to %d MHz, L2 %d MiB; 2 stages of %d B, pages in a "
              "random order\n\n",
              props.name, props.multiProcessorCount, sm_clock_khz / 1000,
              props.l2CacheSize >> 20, kTileBytes);
  std::printf("%-6s %5s %6s %6s %9s %8s %9s\n", "batch", "ctas", "tiles", "hold", "MB/call",
              "µs/call", "TB/s");
  // The swapped kernel's grids at V3, 4,096 tokens (64 tiles a sequence): batch × splits CTAs,
  // the heuristic's splits, then batch 32 and 64 unsplit (`--split fixed:1`: no partial rows).
  const Shape shapes[] = {{"empty", 128, 0},  {"1", 32, 2},     {"8", 128, 4},
                          {"32", 128, 16},   {"64", 128, 32},  {"128", 128, 64},
                          {"32/1", 32, 64},  {"64/1", 64, 64}};
  for (const long long hold : {0LL, 2100LL}) {
    for (const Shape& shape : shapes) {
      const long long tiles_per_call = static_cast<long long>(shape.ctas) * shape.tiles_per_cta;
      const double call_bytes = static_cast<double>(tiles_per_call) * kTileBytes;
      const int replicas = std::clamp(
          static_cast<int>(4.0 * props.l2CacheSize / std::max(call_bytes, 1.0)) + 1, 2,
          tiles_per_call > 0 ? static_cast<int>(num_pages / tiles_per_call) : 64);
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      MLALAB_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int r = 0; r < replicas; ++r) {
        copy_tiles<<<shape.ctas, 64, smem, stream>>>(
            maps, pages, static_cast<int>(r * tiles_per_call), shape.tiles_per_cta, hold);
      }
      MLALAB_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
      MLALAB_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
      std::vector<double> samples;
      for (int run = 0; run < 23; ++run) {
        MLALAB_CUDA_TRY(cudaEventRecord(start, stream));
        MLALAB_CUDA_TRY(cudaGraphLaunch(exec, stream));
        MLALAB_CUDA_TRY(cudaEventRecord(stop, stream));
        MLALAB_CUDA_TRY(cudaEventSynchronize(stop));
        float ms = 0;
        MLALAB_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
        if (run >= 3) samples.push_back(1e3 * ms / replicas);
      }
      MLALAB_CUDA_TRY(cudaGraphExecDestroy(exec));
      MLALAB_CUDA_TRY(cudaGraphDestroy(graph));
      const double us = mlalab::median(std::move(samples));
      std::printf("%-6s %5d %6d %6lld %9.1f %8.2f %9.2f\n", shape.name, shape.ctas,
                  shape.tiles_per_cta, hold, call_bytes / 1e6, us,
                  call_bytes / (us * 1e-6) / 1e12);
      std::fflush(stdout);
    }
  }
  MLALAB_CUDA_TRY(cudaFree(pages));
  MLALAB_CUDA_TRY(cudaFree(cache));
  return 0;
}
