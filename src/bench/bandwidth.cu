#include "bench/bandwidth.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/cuda_raii.h"
#include "core/median.h"
#include "kernels/device.h"

namespace mlalab::bench {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;
// Far larger than any L2 we target (50 MiB on H100/H200), so almost every byte comes from HBM.
constexpr std::size_t kMinBufferBytes = 2 * kGiB;
constexpr std::size_t kL2Multiple = 16;
constexpr std::size_t kLoadBytes = sizeof(uint4);
constexpr int kThreadsPerBlock = 256;
constexpr int kLoadsInFlight = 4;
constexpr int kWarmupRuns = 3;
constexpr int kTimedRuns = 21;  // odd, so the median is one measured run
constexpr double kBytesPerGB = 1e9;
constexpr double kMsPerSecond = 1e3;

// Grid: a full wave of CTAs; each thread walks the buffer with a grid-wide stride, so every
// warp's loads are 512 contiguous bytes. Work: xor of every 32-bit word; one atomic per warp
// folds the result into *sink, which keeps the compiler from dropping any load.
__global__ void stream_read_kernel(const uint4* __restrict__ data, std::size_t count,
                                   unsigned int* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned int folded = 0;
  // Several independent 16-byte loads issued before any is used: HBM only reaches its
  // bandwidth with many bytes in flight per SM.
  for (; i + (kLoadsInFlight - 1) * stride < count; i += kLoadsInFlight * stride) {
    uint4 chunk[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) chunk[k] = __ldcs(data + i + k * stride);
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      folded ^= chunk[k].x ^ chunk[k].y ^ chunk[k].z ^ chunk[k].w;
    }
  }
  for (; i < count; i += stride) {
    const uint4 chunk = __ldcs(data + i);
    folded ^= chunk.x ^ chunk.y ^ chunk.z ^ chunk.w;
  }
  constexpr unsigned int kFullWarp = 0xffffffffu;
  folded = __reduce_xor_sync(kFullWarp, folded);
  if (threadIdx.x % warpSize == 0) atomicXor(sink, folded);
}

template <typename Enqueue>
double median_ms(cudaStream_t stream, Enqueue&& enqueue) {
  CudaEvent start;
  CudaEvent stop;
  for (int run = 0; run < kWarmupRuns; ++run) enqueue();
  std::vector<double> samples;
  samples.reserve(kTimedRuns);
  for (int run = 0; run < kTimedRuns; ++run) {
    start.record(stream);
    enqueue();
    stop.record(stream);
    samples.push_back(CudaEvent::elapsed_ms(start, stop));
  }
  return median(std::move(samples));
}

double gbps(std::size_t bytes, double ms) {
  return static_cast<double>(bytes) / kBytesPerGB / (ms / kMsPerSecond);
}

}  // namespace

Bandwidth measure_bandwidth(cudaStream_t stream) {
  const kernels::CurrentDevice& device = kernels::current_device();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  MLALAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));

  // Whole 16-byte loads, and two equal halves for the copy.
  constexpr std::size_t kGranule = 2 * kLoadBytes;
  std::size_t bytes = std::max(kMinBufferBytes, kL2Multiple * device.l2_bytes);
  bytes = std::min(bytes, free_bytes / 2) / kGranule * kGranule;

  DeviceBuffer<uint4> buffer(bytes / kLoadBytes);
  DeviceBuffer<unsigned int> sink(1);
  MLALAB_CUDA_TRY(cudaMemsetAsync(buffer.data(), 0, buffer.bytes(), stream));
  MLALAB_CUDA_TRY(cudaMemsetAsync(sink.data(), 0, sink.bytes(), stream));

  int blocks_per_sm = 0;
  MLALAB_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, stream_read_kernel, kThreadsPerBlock, 0));
  const int blocks = device.sm_count * std::max(1, blocks_per_sm);

  const double read_ms = median_ms(stream, [&] {
    stream_read_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(buffer.data(), buffer.size(),
                                                                sink.data());
    MLALAB_CUDA_TRY(cudaGetLastError());
  });

  const std::size_t half_bytes = buffer.bytes() / 2;
  const auto* source = reinterpret_cast<const char*>(buffer.data());
  auto* destination = reinterpret_cast<char*>(buffer.data()) + half_bytes;
  const double copy_ms = median_ms(stream, [&] {
    MLALAB_CUDA_TRY(cudaMemcpyAsync(destination, source, half_bytes, cudaMemcpyDeviceToDevice,
                                    stream));
  });
  MLALAB_CUDA_TRY(cudaStreamSynchronize(stream));

  return Bandwidth{.read_gbps = gbps(buffer.bytes(), read_ms),
                   .copy_gbps = gbps(2 * half_bytes, copy_ms)};
}

}  // namespace mlalab::bench
