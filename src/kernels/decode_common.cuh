#pragma once
// What the decode kernels of every family share: the launch arguments, which work a CTA
// owns, the result of a CTA without tokens, and the host-side launch (validation, shared
// memory opt-in, workspace carving, the combine for split launches).
//
// Grid → work: CTA c handles head block  c % head_blocks,
//                          split          (c / head_blocks) % num_splits,
//                          batch entry    c / (head_blocks · num_splits).
// Head blocks are the fastest index so that the CTAs reading the same KV tokens (H = 128 has
// two or more head blocks) run side by side and share those tokens through L2.
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>

#include "core/validate.h"
#include "kernels/device.h"
#include "kernels/launch.h"
#include "kernels/portable/primitives.cuh"

namespace mlalab::kernels {

// What every CTA reads besides the problem: the plan, and constants folded on the host.
struct DecodeArgs {
  DecodeParams params;
  int head_blocks;
  int num_splits;
  int page_shift;        // log2(page_size)
  float scale_log2;      // softmax_scale · log2(e): the kernels work in base 2
  float* partial_out;    // [num_splits, batch, num_heads, d_v] when num_splits > 1
  float* partial_lse;    // [num_splits, batch, num_heads], natural log
};

constexpr float kLn2 = 0.69314718055994530942f;
constexpr float kLog2e = 1.44269504088896340736f;

// The KV range and heads of one CTA.
struct CtaWork {
  int head0;        // first head of the block
  int split;
  int batch;
  int seq_len;
  int token_begin;  // first token of the split
  int steps;        // block_t-token steps of the split; ≤ 0 when it has no tokens
  int num_splits;

  __device__ bool split_output() const { return num_splits > 1; }

  template <int kBlockH, int kBlockT>
  __device__ static CtaWork of_block(const DecodeArgs& args) {
    CtaWork work{};
    const int head_block = blockIdx.x % args.head_blocks;
    work.split = (blockIdx.x / args.head_blocks) % args.num_splits;
    work.batch = blockIdx.x / (args.head_blocks * args.num_splits);
    work.num_splits = args.num_splits;
    work.head0 = head_block * kBlockH;
    work.seq_len = args.params.seq_lens[work.batch];
    const int seq_steps = (work.seq_len + kBlockT - 1) / kBlockT;
    const int steps_per_split = (seq_steps + args.num_splits - 1) / args.num_splits;
    const int step_begin = work.split * steps_per_split;
    work.steps = min(seq_steps, step_begin + steps_per_split) - step_begin;
    work.token_begin = step_begin * kBlockT;
    return work;
  }

  // Global address of a q row of this CTA's head block, or nullptr past the last head.
  __device__ const bf16* q_row(const DecodeParams& p, int row) const {
    const int head = head0 + row;
    return head < p.num_heads ? p.q + batch * p.q_batch_stride + head * p.q_head_stride : nullptr;
  }
};

// The KV rows one thread copies in each step of the pipeline (rows first_row + i · row_stride
// of the tile, the same every step), with their page-table entries read one step ahead: the
// copies of step s then issue at once instead of waiting for a dependent global load of the
// table.
template <int kBlockT, int kRows = 1>
class KvRowLookahead {
 public:
  __device__ KvRowLookahead(const DecodeArgs& args, const CtaWork& work, int first_row,
                            int row_stride = 0)
      : args_(args), work_(work), first_row_(first_row), row_stride_(row_stride) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) next_page_[i] = page_at(0, i);
  }

  // The global addresses of this thread's rows in `step` (called for steps 0, 1, 2, ... in
  // order), nullptr past the sequence's end; starts reading the next step's page entries.
  __device__ void take(int step, const bf16* (&sources)[kRows]) {
    const DecodeParams& p = args_.params;
    const int page_mask = (1 << args_.page_shift) - 1;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int page = next_page_[i];
      next_page_[i] = page_at(step + 1, i);
      const int token = token_at(step, i);
      // Validation guarantees the page is in range; the check keeps a caller that skipped
      // validation from reading outside the cache.
      const bool valid = token < work_.seq_len &&
                         static_cast<unsigned>(page) < static_cast<unsigned>(p.num_pages);
      sources[i] = valid ? p.kv_cache + page * p.kv_page_stride +
                               (token & page_mask) * p.kv_row_stride
                         : nullptr;
    }
  }

 private:
  __device__ int token_at(int step, int i) const {
    return work_.token_begin + step * kBlockT + first_row_ + i * row_stride_;
  }
  // Only entries of pages the sequence uses are read (the rest of the row may be garbage).
  __device__ int page_at(int step, int i) const {
    const DecodeParams& p = args_.params;
    const int token = token_at(step, i);
    if (token >= work_.seq_len) return -1;
    return p.page_table[work_.batch * p.page_table_stride + (token >> args_.page_shift)];
  }

  const DecodeArgs& args_;
  const CtaWork& work_;
  int first_row_;
  int row_stride_;
  int next_page_[kRows];
};

// Where one head row of a CTA's result goes: its split's fp32 partial out and lse when the
// launch is split, else the final bf16 out and lse.
struct ResultSlot {
  long long row_index;     // batch · num_heads + head
  long long split_offset;  // split · batch · num_heads, or −1 when the result is final
  bf16* out_row;           // the final out's row (unused for a split partial)

  __device__ ResultSlot(const DecodeArgs& args, const CtaWork& work, int head)
      : row_index(static_cast<long long>(work.batch) * args.params.num_heads + head),
        split_offset(work.split_output() ? static_cast<long long>(work.split) *
                                               args.params.batch * args.params.num_heads
                                         : -1),
        out_row(args.params.out + work.batch * args.params.out_batch_stride +
                head * args.params.out_head_stride) {}

  __device__ bool partial() const { return split_offset >= 0; }

  __device__ void store_lse(const DecodeArgs& args, float lse) const {
    if (partial()) {
      args.partial_lse[split_offset + row_index] = lse;
    } else {
      args.params.lse[row_index] = lse;
    }
  }
};

// One head row's result: out normalised by the row's sum (a split partial by the split's own
// sum), and lse; the sink joins the denominator of a final result only (the combine adds it
// for split launches). row_max and row_sum are base 2.
class ResultRow {
 public:
  __device__ ResultRow(const DecodeArgs& args, const CtaWork& work, int head, float row_max,
                       float row_sum)
      : args_(args), slot_(args, work, head), lse_((row_max + log2f(row_sum)) * kLn2) {
    const DecodeParams& p = args.params;
    float denominator = row_sum;
    if (!slot_.partial() && p.sink_logits != nullptr) {
      denominator += exp2f(p.sink_logits[head] * kLog2e - row_max);
    }
    inverse_ = 1.0f / denominator;
  }

  // Columns `column` and `column + 1` of O, not yet normalised.
  __device__ void store(int column, float o0, float o1) const {
    if (slot_.partial()) {
      float* partial =
          args_.partial_out + (slot_.split_offset + slot_.row_index) * args_.params.d_v;
      *reinterpret_cast<float2*>(partial + column) = make_float2(o0 * inverse_, o1 * inverse_);
    } else {
      *reinterpret_cast<std::uint32_t*>(slot_.out_row + column) =
          portable::pack_bf16x2(o0 * inverse_, o1 * inverse_);
    }
  }

  __device__ void store_lse() const { slot_.store_lse(args_, lse_); }

 private:
  const DecodeArgs& args_;
  ResultSlot slot_;
  float lse_;  // natural log
  float inverse_;
};

// The result of a CTA without tokens (its split is past the sequence's end, or the sequence
// is empty): out = 0, lse = −inf. A split partial only needs its −inf lse: the combine gives
// it zero weight without reading its out.
template <int kBlockH, int kThreads>
__device__ void write_empty_result(const DecodeArgs& args, const CtaWork& work) {
  const DecodeParams& p = args.params;
  for (int row = threadIdx.x; row < kBlockH; row += kThreads) {
    const int head = work.head0 + row;
    if (head < p.num_heads) ResultSlot(args, work, head).store_lse(args, -INFINITY);
  }
  if (!work.split_output()) {
    const int vectors_per_row = p.d_v / 8;
    for (int i = threadIdx.x; i < kBlockH * vectors_per_row; i += kThreads) {
      const int head = work.head0 + i / vectors_per_row;
      if (head >= p.num_heads) continue;
      reinterpret_cast<uint4*>(ResultSlot(args, work, head).out_row)[i % vectors_per_row] =
          make_uint4(0, 0, 0, 0);
    }
  }
}

// Lets the combine kernel (a programmatic dependent launch) start launching once every CTA
// of this grid has passed this point; its CTAs still wait for this grid to finish and flush
// before they read. Called after a CTA's KV loop, so every decode CTA is already resident and
// waiting combine CTAs can never hold the slots a decode CTA needs.
__device__ __forceinline__ void allow_dependent_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// The host side of a decode launch, shared by every variant of every family.
template <auto kKernel>
LaunchStatus launch_decode(int block_h, int threads, int smem_bytes, const DecodeParams& params,
                           const LaunchPlan& plan, void* workspace, cudaStream_t stream) {
  const bool plan_matches = plan.num_splits >= 1 && plan.num_splits <= kMaxSplits &&
                            plan.head_blocks == (params.num_heads + block_h - 1) / block_h &&
                            plan.ctas == params.batch * plan.head_blocks * plan.num_splits;
  if (validate_shapes(params) || !plan_matches || (plan.num_splits > 1 && workspace == nullptr)) {
    return {.error = cudaErrorInvalidValue, .refusal = LaunchRefusal::kInvalidInput};
  }
  // Decided before asking CUDA, which answers cudaErrorInvalidValue here as for a bad input.
  const int smem_limit = current_device().smem_optin_bytes;
  if (smem_limit > 0 && smem_bytes > smem_limit) {
    return {.error = cudaErrorInvalidValue, .refusal = LaunchRefusal::kCannotRunHere};
  }

  // Raise the kernel's dynamic shared-memory limit once per size (not a stream operation, so
  // it is also safe while a graph is being captured).
  static std::atomic<int> configured_smem_bytes{0};
  if (smem_bytes > configured_smem_bytes.load()) {
    if (const auto status = cudaFuncSetAttribute(
            kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        status != cudaSuccess) {
      return {.error = status, .refusal = LaunchRefusal::kNone};
    }
    configured_smem_bytes.store(smem_bytes);
  }

  DecodeArgs args{.params = params,
                  .head_blocks = plan.head_blocks,
                  .num_splits = plan.num_splits,
                  .page_shift = __builtin_ctz(static_cast<unsigned>(params.page_size)),
                  .scale_log2 = params.softmax_scale * kLog2e,
                  .partial_out = nullptr,
                  .partial_lse = nullptr};
  if (plan.num_splits > 1) {
    const std::size_t rows =
        static_cast<std::size_t>(plan.num_splits) * params.batch * params.num_heads;
    args.partial_out = static_cast<float*>(workspace);
    args.partial_lse = args.partial_out + rows * params.d_v;
  }
  kKernel<<<plan.ctas, threads, smem_bytes, stream>>>(args);
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess && plan.num_splits > 1) {
    status = launch_combine(params, plan.num_splits, args.partial_out, args.partial_lse, stream);
  }
  return {.error = status, .refusal = LaunchRefusal::kNone};
}

}  // namespace mlalab::kernels
