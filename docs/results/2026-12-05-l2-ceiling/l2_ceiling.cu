// How many bytes a second can bulk copies land in the SMs' shared memory, with and without
// cluster multicast? The question behind the 128-head ceiling (docs/perf-notes.md, "The copy
// path's ceiling"): the 64-token kernel lands 73.7 KB per tile in each SM, ~5.0 TB/s over
// the GPU at 616 TFLOP/s, and both CTAs of a sequence read every tile from L2. If bulk copies
// cannot land much more than that, only multicast (one L2 read landing in both CTAs of a
// cluster) can move the kernel past it.
//
// One CTA per SM, one thread issuing (or several, each with its own ring: is one thread what
// limits a CTA?): a ring of `stages` chunks of `chunk` bytes, each copied with cp.async.bulk
// and waited for, then reissued; no other work. Three ways to read:
//   solo:      each CTA its own stream of chunks (every byte read from L2 once);
//   pair:      the two CTAs of a cluster read the same chunks, each its own copy (the 128-head
//              kernel's traffic today: two L2 reads per tile);
//   multicast: the two CTAs of a cluster each copy half of a chunk into both CTAs' stage
//              (.multicast::cluster), and a stage is reissued only once both CTAs have seen
//              it land (each arrives on both CTAs' "empty" barriers): one L2 read per tile.
// Each over a region that stays in L2 (16 MiB) and one that does not (1 GiB). The figure is
// bytes landed in shared memory (summed over CTAs) per second, the median of 11 runs.
//
// Build and run (sm_90a; from the repository root):
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -o /tmp/l2_ceiling \
//     docs/results/2026-12-05-l2-ceiling/l2_ceiling.cu && /tmp/l2_ceiling
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/median.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/wgmma/primitives.cuh"

namespace wg = mlalab::kernels::wgmma;
using mlalab::kernels::portable::smem_address;

#define CHECK(call)                                                                    \
  do {                                                                                 \
    const cudaError_t status = (call);                                                 \
    if (status != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

enum class Mode { kSolo, kPair, kMulticast };
constexpr int kMaxStages = 16;

__device__ __forceinline__ void bulk_load(std::uint32_t destination, const char* source,
                                          int bytes, std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(destination), "l"(source), "r"(bytes), "r"(barrier)
      : "memory");
}
// Lands the same bytes at `destination` in every CTA of the cluster in `mask`, completing on
// each one's barrier at `barrier`'s offset.
__device__ __forceinline__ void bulk_load_multicast(std::uint32_t destination, const char* source,
                                                    int bytes, std::uint32_t barrier,
                                                    std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;\n" ::"r"(destination),
      "l"(source), "r"(bytes), "r"(barrier), "h"(mask)
      : "memory");
}

// The region is cut into as many equal spans as there are streams; a stream starts at its span
// and reads on (wrapping), so that concurrent streams read different addresses at any time.
__global__ void __cluster_dims__(2, 1, 1)
    land_chunks(const char* region, std::size_t region_bytes, int chunk, int stages,
                int chunks_per_cta, Mode mode) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // the primitives exist in device code only
  extern __shared__ __align__(128) char stage_bytes[];
  __shared__ __align__(8) std::uint64_t full[kMaxStages];
  __shared__ __align__(8) std::uint64_t empty[kMaxStages];
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  const int peer = static_cast<int>(rank ^ 1u);
  const bool multicast = mode == Mode::kMulticast;
  const int streams = mode == Mode::kSolo ? gridDim.x : gridDim.x / 2;
  const int stream = mode == Mode::kSolo ? blockIdx.x : blockIdx.x / 2;
  const std::size_t span_chunks = region_bytes / streams / chunk;
  const std::size_t stream_start = stream * span_chunks * chunk;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      wg::mbarrier_init(smem_address(&full[s]), 1);
      wg::mbarrier_init(smem_address(&empty[s]), multicast ? 2 : 1);
    }
    wg::fence_barrier_init();
  }
  wg::cluster_arrive();
  wg::cluster_wait();
  if (threadIdx.x % 32 != 0) {
    wg::cluster_arrive();
    wg::cluster_wait();
    return;
  }
  // Issuer w (lane 0 of warp w) runs its own ring, stages [w * ring, (w + 1) * ring), over
  // the CTA's chunks w, w + issuers, ...: its j-th chunk is the CTA's j * issuers + w.
  const int issuers = blockDim.x / 32;
  const int issuer = threadIdx.x / 32;
  const int ring = stages / issuers;
  const int ring_base = issuer * ring;
  const int my_chunks = chunks_per_cta / issuers;

  const int piece = multicast ? chunk / 2 : chunk;
  auto stage_of = [&](int j) { return ring_base + j % ring; };
  auto issue = [&](int j) {
    const int s = stage_of(j);
    const int i = j * issuers + issuer;
    const std::uint32_t barrier = smem_address(&full[s]);
    const std::size_t offset =
        (stream_start + static_cast<std::size_t>(i) * chunk) % region_bytes;
    wg::mbarrier_expect_tx(barrier, chunk);
    wg::mbarrier_arrive(barrier);
    const std::uint32_t destination = smem_address(stage_bytes + s * chunk);
    if (multicast) {
      const int half = static_cast<int>(rank) * piece;
      bulk_load_multicast(destination + half, region + offset + half, piece, barrier, 0b11);
    } else {
      bulk_load(destination, region + offset, chunk, barrier);
    }
  };
  // A stage may be refilled once every CTA that it lands in has seen its last chunk land.
  auto release = [&](int j) {
    const int s = stage_of(j);
    wg::mbarrier_wait(smem_address(&full[s]), (j / ring) & 1);
    if (multicast) {
      wg::mbarrier_arrive_on_peer(wg::peer_address(smem_address(&empty[s]), peer));
      wg::mbarrier_arrive_on_peer(wg::peer_address(smem_address(&empty[s]), rank));
    } else {
      wg::mbarrier_arrive(smem_address(&empty[s]));
    }
  };

  for (int j = 0; j < my_chunks; ++j) {
    if (j >= ring) {
      release(j - ring);
      wg::mbarrier_wait_for_peer(smem_address(&empty[stage_of(j)]), (j / ring - 1) & 1);
    }
    issue(j);
  }
  for (int j = max(0, my_chunks - ring); j < my_chunks; ++j) release(j);
  wg::cluster_arrive();  // no CTA leaves while the other may still land bytes in it
  wg::cluster_wait();
#endif
}

struct Result {
  double landed_tbps;
  double ms;
};

Result measure(const char* region, std::size_t region_bytes, int ctas, int chunk, int stages,
               int issuers, int chunks_per_cta, Mode mode) {
  const int smem = chunk * stages;
  CHECK(cudaFuncSetAttribute(land_chunks, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int run = 0; run < 14; ++run) {
    CHECK(cudaEventRecord(start));
    land_chunks<<<ctas, 32 * issuers, smem>>>(region, region_bytes, chunk, stages,
                                              chunks_per_cta, mode);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (run >= 3) samples.push_back(ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  const double ms = mlalab::median(std::move(samples));
  const double landed = static_cast<double>(ctas) * chunks_per_cta * chunk;
  return {landed / (ms * 1e-3) / 1e12, ms};
}

int main() {
  cudaDeviceProp props{};
  CHECK(cudaGetDeviceProperties(&props, 0));
  int sm_clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, 0));
  const std::size_t kLarge = std::size_t{1} << 30;
  const std::size_t kResident = std::size_t{16} << 20;
  char* region = nullptr;
  CHECK(cudaMalloc(&region, kLarge));
  CHECK(cudaMemset(region, 0x5a, kLarge));

  // As many two-CTA clusters as fit at once with the largest ring below, so that every CTA
  // runs in the one wave (the same grid for every row).
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(32);
  config.dynamicSmemBytes = 192 * 1024;
  config.gridDim = dim3(props.multiProcessorCount);
  CHECK(cudaFuncSetAttribute(land_chunks, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(config.dynamicSmemBytes)));
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, land_chunks, &config));
  const int ctas = 2 * clusters;
  std::printf("%s, %d SMs, SM clock up to %d MHz, L2 %d MiB; %d CTAs (%d clusters of 2), one "
              "per SM\n\n",
              props.name, props.multiProcessorCount, sm_clock_khz / 1000, props.l2CacheSize >> 20,
              ctas, clusters);
  std::printf("%-10s %-9s %8s %7s %8s %9s %14s %14s\n", "mode", "region", "chunk KB", "stages",
              "issuers", "ms", "landed TB/s", "L2 reads TB/s");

  struct Row { Mode mode; const char* name; };
  const Row modes[] = {{Mode::kSolo, "solo"}, {Mode::kPair, "pair"},
                       {Mode::kMulticast, "multicast"}};
  // {chunk bytes, stages, issuers}: the issuers share the stages, each its own ring.
  const int shapes[][3] = {{16 * 1024, 1, 1}, {16 * 1024, 2, 1}, {16 * 1024, 4, 1},
                           {16 * 1024, 8, 1}, {16 * 1024, 4, 2}, {16 * 1024, 8, 4},
                           {32 * 1024, 1, 1}, {32 * 1024, 2, 1}, {32 * 1024, 4, 1},
                           {32 * 1024, 6, 1}, {32 * 1024, 4, 2}, {32 * 1024, 6, 3},
                           {64 * 1024, 2, 1}, {64 * 1024, 3, 1}, {64 * 1024, 2, 2}};
  for (const std::size_t region_bytes : {kResident, kLarge}) {
    for (const auto& [chunk, stages, issuers] : shapes) {
      // ~64 MiB landed per CTA (the same number of chunks for each issuer): long enough
      // that the launch is noise.
      const int chunks_per_cta = (64 << 20) / chunk / issuers * issuers;
      for (const Row& row : modes) {
        const Result r = measure(region, region_bytes, ctas, chunk, stages, issuers,
                                 chunks_per_cta, row.mode);
        const double l2 = row.mode == Mode::kMulticast ? r.landed_tbps / 2 : r.landed_tbps;
        std::printf("%-10s %-9s %8d %7d %8d %9.3f %14.2f %14.2f\n", row.name,
                    region_bytes == kResident ? "16 MiB" : "1 GiB", chunk / 1024, stages,
                    issuers, r.ms, r.landed_tbps, l2);
      }
    }
  }
  CHECK(cudaFree(region));
  return 0;
}
