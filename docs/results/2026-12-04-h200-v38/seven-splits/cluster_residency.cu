// How many clusters of 1-8 CTAs of the 64-head wgmma kernels' size (384 threads, one CTA per
// SM by its shared memory) the GPU holds at once: cudaOccupancyMaxActiveClusters. A stand-in
// kernel with the same block and dynamic shared memory; perf-notes versions 37 ("the next lever") and 38.
//   nvcc -O2 -std=c++17 -arch=sm_90a cluster_residency.cu -o cluster_residency
#include <cuda_runtime.h>

#include <cstdio>

__global__ void stand_in() {
  extern __shared__ unsigned char smem[];
  smem[threadIdx.x] = 0;
}

int main() {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  cudaFuncSetAttribute(stand_in, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (const int smem : {227696, 231504}) {  // the seesaw (t32 s4) and lockstep (t64 s2), V3
    cudaFuncSetAttribute(stand_in, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (const int size : {1, 2, 3, 4, 5, 6, 7, 8}) {
      cudaLaunchAttribute attribute{};
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim = {static_cast<unsigned>(size), 1, 1};
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(static_cast<unsigned>(size * 16));  // a whole number of clusters
      config.blockDim = dim3(384);
      config.dynamicSmemBytes = smem;
      config.attrs = &attribute;
      config.numAttrs = 1;
      int clusters = 0;
      const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, stand_in, &config);
      std::printf("smem %d B, cluster %2d: %3d clusters resident (%3d CTAs)%s%s\n", smem, size,
                  clusters, clusters * size, status == cudaSuccess ? "" : " error: ",
                  status == cudaSuccess ? "" : cudaGetErrorString(status));
    }
  }
  return 0;
}
