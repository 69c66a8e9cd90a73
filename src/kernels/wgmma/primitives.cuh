#pragma once
// The Hopper (sm_90a) instructions the wgmma family adds to the portable primitives, one thin
// wrapper each: warpgroup MMA from shared-memory descriptors (and with A from registers), its
// fence / commit / wait, the proxy fence that makes cp.async data visible to it, the
// mbarriers, the tensor memory accelerator's tile copy, and a cluster's shared memory.
// Compiled for sm_90a (the family's kernel bodies are guarded by MLALAB_WGMMA_AVAILABLE), the
// proxy fence, mbarriers, TMA and clusters for any sm_90 or later.
#include <cstdint>

#include "kernels/wgmma/traits.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MLALAB_WGMMA_AVAILABLE 1
#endif

namespace mlalab::kernels::wgmma {

// A shared-memory matrix descriptor for the 128-byte-swizzled layout (traits.h): start
// address, leading byte offset and stride byte offset, each in 16-byte units; swizzle mode 1
// (128 bytes), base offset 0 (every atom starts on a 1,024-byte boundary). K-major operands:
// stride = between 8-row atoms, leading unused (1). MN-major: leading = between 64-column
// spans, stride = between 8-row atoms along K.
__device__ __forceinline__ std::uint64_t matrix_descriptor(std::uint32_t smem_address,
                                                           std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return static_cast<std::uint64_t>((smem_address & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<std::uint64_t>(stride_bytes >> 4) << 32) | (std::uint64_t{1} << 62);
}

// Moves a descriptor's start address by `bytes` (a multiple of 16, staying in the window).
__device__ __forceinline__ std::uint64_t advance(std::uint64_t descriptor, std::uint32_t bytes) {
  return descriptor + (bytes >> 4);
}

// `value`, unchanged, but opaque to the compiler: an expression of it is computed as written,
// not simplified into another value that ptxas may keep in a different register file.
__device__ __forceinline__ std::uint32_t opaque(std::uint32_t value) {
  asm volatile("" : "+r"(value));
  return value;
}

#ifdef MLALAB_WGMMA_AVAILABLE

__device__ __forceinline__ void fence_operands() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
#endif  // MLALAB_WGMMA_AVAILABLE

// The proxy fence and the mbarriers are sm_90's, not only sm_90a's (the TMA layout test uses
// them on any GPU of compute capability 9.0 or later).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// cp.async writes shared memory through the generic proxy, wgmma and TMA read and write it
// through the async proxy: a reader fences after the barrier wait that publishes the tile
// (decode.cuh, wait_tile_landed), which also orders those writes before a later TMA copy into
// the same buffer.
__device__ __forceinline__ void fence_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Shared-memory barriers between the copy warps and the MMA warps (mbarrier: phase-tracked,
// waited on by parity), and a named barrier for the MMA warps alone.
__device__ __forceinline__ void mbarrier_init(std::uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}
// Arrives once all of this thread's earlier cp.async copies have landed (the arrival was
// counted in the barrier's expected count: .noinc).
__device__ __forceinline__ void mbarrier_arrive_on_copies(std::uint32_t barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(barrier)
               : "memory");
}
// Adds `bytes` to what the barrier's current phase waits for: the bytes a TMA copy will
// complete on it (no arrival).
__device__ __forceinline__ void mbarrier_expect_tx(std::uint32_t barrier, int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(barrier),
               "r"(bytes)
               : "memory");
}
// One box of a four-dimensional tensor map (a __grid_constant__ parameter), at coordinates
// c0..c3, into shared memory at `destination`; its bytes complete on `barrier`.
__device__ __forceinline__ void tma_load_4d(std::uint32_t destination, const void* map, int c0,
                                            int c1, int c2, int c3, std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(destination),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(barrier)
      : "memory");
}
// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from shared to global
// memory with the bulk copy engine, in this thread's bulk group. The shared-memory bytes were
// written through the generic proxy: the writers fence (fence_async_proxy) before the barrier
// that precedes this.
__device__ __forceinline__ void bulk_store(void* destination, std::uint32_t source, int bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(destination),
               "r"(source), "r"(bytes)
               : "memory");
}
// Closes this thread's bulk group and waits until its copies have read their shared memory,
// which may then be reused or the CTA exit (their global writes complete with the grid).
__device__ __forceinline__ void bulk_stores_read_wait() {
  asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Fetches a tensor map into the cache its copies read it from, ahead of the first copy.
__device__ __forceinline__ void prefetch_tensor_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
// Waits until phase `parity` of this CTA's `barrier` has completed: a try_wait loop, the wait
// with the given semantics ("" or e.g. ".acquire.cluster").
#define MLALAB_MBARRIER_WAIT_ASM(semantics)                                     \
  "{\n.reg .pred done;\n"                                                        \
  "wait:\n"                                                                      \
  "mbarrier.try_wait.parity" semantics ".shared::cta.b64 done, [%0], %1;\n"      \
  "@!done bra wait;\n}\n"
__device__ __forceinline__ void mbarrier_wait(std::uint32_t barrier, int parity) {
  asm volatile(MLALAB_MBARRIER_WAIT_ASM("") ::"r"(barrier), "r"(parity) : "memory");
}

// The two CTAs of a cluster (sm_90): each reaches the other's shared memory through
// shared::cluster addresses (mapa), and signals it through the other's mbarriers. The
// cluster's barrier orders every CTA's mbarrier initialisation before any remote arrival.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}
// The address in CTA `rank` of the cluster of this CTA's shared-memory address `local`.
__device__ __forceinline__ std::uint32_t peer_address(std::uint32_t local, int rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
__device__ __forceinline__ void store_to_peer(std::uint32_t remote, float x, float y) {
  asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};\n" ::"r"(remote), "f"(x), "f"(y)
               : "memory");
}
__device__ __forceinline__ void store_to_peer(std::uint32_t remote, float x, float y, float z,
                                              float w) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(remote), "f"(x),
               "f"(y), "f"(z), "f"(w)
               : "memory");
}
// Arrives on a barrier of another CTA of the cluster, releasing this thread's earlier writes
// (to that CTA's shared memory too) at cluster scope.
__device__ __forceinline__ void mbarrier_arrive_on_peer(std::uint32_t remote_barrier) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(
                   remote_barrier)
               : "memory");
}
// Waits for a phase of this CTA's barrier that the other CTA completes: what its arrivals
// released is visible after it (acquire at cluster scope).
__device__ __forceinline__ void mbarrier_wait_for_peer(std::uint32_t barrier, int parity) {
  asm volatile(MLALAB_MBARRIER_WAIT_ASM(".acquire.cluster") ::"r"(barrier), "r"(parity)
               : "memory");
}
#undef MLALAB_MBARRIER_WAIT_ASM
#endif  // __CUDA_ARCH__ >= 900

#ifdef MLALAB_WGMMA_AVAILABLE
// Gives this warpgroup's registers back (dec) or claims more (inc), to the count given.
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// Named barriers of one warpgroup role (0 is __syncthreads): 1 the MMA warpgroups, 2 the
// copy warpgroup.
template <int kThreadCount>
__device__ __forceinline__ void sync_mma_threads() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(kThreadCount) : "memory");
}

template <int kThreadCount>
__device__ __forceinline__ void sync_copy_threads() {
  asm volatile("bar.sync 2, %0;\n" ::"n"(kThreadCount) : "memory");
}

// A one-way hand-off between two warps (the seesaw schedule, decode.cuh) on named barrier
// `id` (3 to 10): the producer's shared-memory writes before its arrive are visible to the
// consumer after its sync (bar.arrive synchronizes with bar.sync, PTX memory model); the
// producer does not wait. compute-sanitizer's racecheck does not see that order and reports
// the hand-off's buffers; a bar.sync on both sides silences it and costs 4-5 % (results
// 2026-12-02-h200-handoff).
__device__ __forceinline__ void hand_off_arrive(int id) {
  asm volatile("bar.arrive %0, 64;\n" ::"r"(id) : "memory");
}
__device__ __forceinline__ void hand_off_sync(int id) {
  asm volatile("bar.sync %0, 64;\n" ::"r"(id) : "memory");
}

// Keeps the compiler from moving accesses of accumulator registers across a wgmma fence or
// wait (the asm statements above do not name the registers the hardware writes).
template <int kCount>
__device__ __forceinline__ void pin_registers(float (&values)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(values[i])::"memory");
}

// A part's output accumulators, zeroed and pinned before its first MMA group: zeroed between
// the first MMAs instead, each would be fenced by ptxas (C7519).
template <int kTiles, int kCount>
__device__ __forceinline__ void zero_accumulators(float (&tiles)[kTiles][kCount]) {
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile)
#pragma unroll
    for (int i = 0; i < kCount; ++i) tiles[tile][i] = 0.0f;
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile) pin_registers(tiles[tile]);
}

// d (64×16 fp32 per warpgroup; 8 per thread) = A (64×16, descriptor) · B (16 × 16 K-major,
// descriptor), plus d when kAccumulate. A is K-major, or MN-major with kTransposedA (the
// swapped kernel's Vᵀ: 64 d_v columns contiguous, tokens along K). Without kAccumulate d is
// output only: no instruction needs to define it first (which, while another MMA group is
// in flight, would make ptxas serialize the MMAs).
#define MLALAB_WGMMA_SS_ASM(shape, regs, a_index, b_index, scale_index, trans_a_index) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %" #scale_index ", 0;\n"                          \
  "wgmma.mma_async.sync.aligned." shape ".f32.bf16.bf16 {" regs "}, %" #a_index       \
  ", %" #b_index ", p, 1, 1, %" #trans_a_index ", 0;\n}\n"

template <bool kAccumulate, bool kTransposedA = false>
__device__ __forceinline__ void mma_m64n16k16_ss(float (&d)[8], std::uint64_t a_desc,
                                                 std::uint64_t b_desc) {
  if constexpr (kAccumulate) {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n16k16", "%0, %1, %2, %3, %4, %5, %6, %7", 8, 9, 10, 11)
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7])
                 : "l"(a_desc), "l"(b_desc), "r"(1), "n"(kTransposedA ? 1 : 0));
  } else {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n16k16", "%0, %1, %2, %3, %4, %5, %6, %7", 8, 9, 10, 11)
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]),
                   "=f"(d[6]), "=f"(d[7])
                 : "l"(a_desc), "l"(b_desc), "r"(0), "n"(kTransposedA ? 1 : 0));
  }
}

// As above with N = 32 (16 per thread).
#define MLALAB_WGMMA_N32_REGS \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
template <bool kAccumulate>
__device__ __forceinline__ void mma_m64n32k16_ss(float (&d)[16], std::uint64_t a_desc,
                                                 std::uint64_t b_desc) {
  if constexpr (kAccumulate) {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n32k16", MLALAB_WGMMA_N32_REGS, 16, 17, 18, 19)
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(a_desc), "l"(b_desc), "r"(1), "n"(0));
  } else {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n32k16", MLALAB_WGMMA_N32_REGS, 16, 17, 18, 19)
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]),
                   "=f"(d[6]), "=f"(d[7]), "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]),
                   "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15])
                 : "l"(a_desc), "l"(b_desc), "r"(0), "n"(0));
  }
}
// As above with A (64×16) from registers: the m16n8k16 A fragment of each warp's 16 rows.
template <bool kAccumulate>
__device__ __forceinline__ void mma_m64n32k16_rs(float (&d)[16], const std::uint32_t (&a)[4],
                                                 std::uint64_t b_desc) {
#define MLALAB_WGMMA_RS_N32_ASM                                                               \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"                                                \
  "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" MLALAB_WGMMA_N32_REGS "}, "        \
  "{%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
  if constexpr (kAccumulate) {
    asm volatile(MLALAB_WGMMA_RS_N32_ASM
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
  } else {
    asm volatile(MLALAB_WGMMA_RS_N32_ASM
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]),
                   "=f"(d[6]), "=f"(d[7]), "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]),
                   "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(0));
  }
#undef MLALAB_WGMMA_RS_N32_ASM
}
#undef MLALAB_WGMMA_N32_REGS

// As above with N = 64 (32 per thread): S over a 64-token tile, A from shared memory or from
// registers.
#define MLALAB_WGMMA_N64_REGS                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define MLALAB_WGMMA_N64_OUT(c)                                                                \
  c(d[0]), c(d[1]), c(d[2]), c(d[3]), c(d[4]), c(d[5]), c(d[6]), c(d[7]), c(d[8]), c(d[9]),    \
      c(d[10]), c(d[11]), c(d[12]), c(d[13]), c(d[14]), c(d[15]), c(d[16]), c(d[17]),          \
      c(d[18]), c(d[19]), c(d[20]), c(d[21]), c(d[22]), c(d[23]), c(d[24]), c(d[25]),          \
      c(d[26]), c(d[27]), c(d[28]), c(d[29]), c(d[30]), c(d[31])
#define MLALAB_READ_WRITE(x) "+f"(x)
#define MLALAB_WRITE(x) "=f"(x)
template <bool kAccumulate>
__device__ __forceinline__ void mma_m64n64k16_ss(float (&d)[32], std::uint64_t a_desc,
                                                 std::uint64_t b_desc) {
  if constexpr (kAccumulate) {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n64k16", MLALAB_WGMMA_N64_REGS, 32, 33, 34, 35)
                 : MLALAB_WGMMA_N64_OUT(MLALAB_READ_WRITE)
                 : "l"(a_desc), "l"(b_desc), "r"(1), "n"(0));
  } else {
    asm volatile(MLALAB_WGMMA_SS_ASM("m64n64k16", MLALAB_WGMMA_N64_REGS, 32, 33, 34, 35)
                 : MLALAB_WGMMA_N64_OUT(MLALAB_WRITE)
                 : "l"(a_desc), "l"(b_desc), "r"(0), "n"(0));
  }
}
template <bool kAccumulate>
__device__ __forceinline__ void mma_m64n64k16_rs(float (&d)[32], const std::uint32_t (&a)[4],
                                                 std::uint64_t b_desc) {
#define MLALAB_WGMMA_RS_N64_ASM                                                               \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" MLALAB_WGMMA_N64_REGS "}, "        \
  "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
  if constexpr (kAccumulate) {
    asm volatile(MLALAB_WGMMA_RS_N64_ASM
                 : MLALAB_WGMMA_N64_OUT(MLALAB_READ_WRITE)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
  } else {
    asm volatile(MLALAB_WGMMA_RS_N64_ASM
                 : MLALAB_WGMMA_N64_OUT(MLALAB_WRITE)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(0));
  }
#undef MLALAB_WGMMA_RS_N64_ASM
}

// d (64×64 fp32; 32 per thread) += A (64×16 from registers, the m16n8k16 A fragment of each
// warp's 16 rows) · B (16 tokens × 64 columns, MN-major descriptor: transposed).
__device__ __forceinline__ void mma_m64n64k16_rs_transposed_b(float (&d)[32],
                                                              const std::uint32_t (&a)[4],
                                                              std::uint64_t b_desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" MLALAB_WGMMA_N64_REGS "}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
      : MLALAB_WGMMA_N64_OUT(MLALAB_READ_WRITE)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}
#undef MLALAB_READ_WRITE
#undef MLALAB_WRITE
#undef MLALAB_WGMMA_N64_OUT
#undef MLALAB_WGMMA_N64_REGS

#undef MLALAB_WGMMA_SS_ASM

#endif  // MLALAB_WGMMA_AVAILABLE

}  // namespace mlalab::kernels::wgmma
