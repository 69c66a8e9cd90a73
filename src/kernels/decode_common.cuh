#pragma once
// What the decode kernels of every family share: the launch arguments, which parts of which
// sequences a CTA computes, the result of a CTA without tokens, and the host-side launch
// (validation, shared memory opt-in, workspace carving, the combine).
//
// Grid → work, per-sequence splits: CTA c handles head block  c % head_blocks,
//                                              split          (c / head_blocks) % num_splits,
//                                              batch entry    c / (head_blocks · num_splits).
// Balanced launches: CTA c is worker c / head_blocks of head block c % head_blocks and
// computes the parts of its share of the batch's token stream (balanced_partition.h).
// Head blocks are the fastest index so that the CTAs reading the same KV tokens (H = 128 has
// two or more head blocks) run side by side and share those tokens through L2. A launch whose
// split pairs merge (LaunchPlan::split_pairs) orders its CTAs (batch, head block, split) so
// that each pair is a cluster; its kernel maps them back (wgmma/decode.cuh, pair_block).
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>

#include "core/validate.h"
#include "kernels/balanced_partition.h"
#include "kernels/device.h"
#include "kernels/grid_dependency.cuh"
#include "kernels/launch.h"
#include "kernels/portable/primitives.cuh"
#include "kernels/timeline.h"

namespace mlalab::kernels {

// What every CTA reads besides the problem: the plan, and constants folded on the host.
struct DecodeArgs {
  DecodeParams params;
  int head_blocks;
  int num_splits;
  int workers;           // balanced launches: workers per head block; 0 otherwise
  int part_start_cost;   // balanced launches: start_cost (balanced_partition.h), in steps
  int page_shift;        // log2(page_size)
  float scale_log2;      // softmax_scale · log2(e): the kernels work in base 2
  // Partial results, rows slot · num_heads + head (CtaWork::part_slot): out [rows, d_v] and lse
  // [rows], natural log; slots are num_splits · batch (split) or part_slots (balanced).
  float* partial_out;
  float* partial_lse;
  balanced::SequenceParts* sequence_parts;  // balanced: [batch], for the combine
  bool split_pairs;  // two splits, each pair a cluster that merges its halves (LaunchPlan)
#ifdef MLALAB_TIMELINE
  CtaTimeline* timeline;  // [CTAs], or nullptr: no timeline asked for (kernels/timeline.h)
#endif
};

constexpr float kLn2 = 0.69314718055994530942f;
constexpr float kLog2e = 1.44269504088896340736f;

// 2^x for the wgmma kernels' softmax: the special-function unit's ex2 alone. exp2f adds a
// compare and two predicated multiplies per call to keep results below 2^-126 (denormals)
// exact; a weight that small is nothing beside the row's largest, which is 1, so flushing it
// to zero changes no result, and the three instructions sit on the softmax's chain.
// ex2(−∞) is +0.
__device__ __forceinline__ float exp2_approx(float x) {
  float result;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
}

// One part of a CTA's work: a token range of one sequence, for one head block.
struct CtaWork {
  int head0;        // first head of the block
  int batch;
  int token_begin;  // first token of the part
  int token_end;    // one past its last token
  int steps;        // block_t-token steps of the part
  // The part's slot of partial results (rows slot · num_heads + head), or −1: the part writes
  // the final result. Split launches: split · batch + batch index; balanced: worker + batch
  // index (balanced_partition.h).
  int part_slot;

  __device__ bool partial() const { return part_slot >= 0; }

  // Global address of a q row of this CTA's head block, or nullptr past the last head.
  __device__ const bf16* q_row(const DecodeParams& p, int row) const {
    const int head = head0 + row;
    return head < p.num_heads ? p.q + batch * p.q_batch_stride + head * p.q_head_stride : nullptr;
  }
};

// ---- Timelines (kernels/timeline.h): thread 0 records when its CTA starts and when each of its
// parts is done. Without MLALAB_TIMELINE both are empty, and the kernels' code is as if they
// were not called.
// A kernel with a ring of KV stages (the wgmma family) names their number, and whether its MMA
// warps record their tile events (timeline_tile_event).
__device__ __forceinline__ void timeline_cta_started([[maybe_unused]] const DecodeArgs& args,
                                                     [[maybe_unused]] int ring_stages = 0,
                                                     [[maybe_unused]] bool mma_events = false) {
#ifdef MLALAB_TIMELINE
  if (threadIdx.x != 0 || args.timeline == nullptr) return;
  CtaTimeline& cta = args.timeline[blockIdx.x];
  cta.start_clock = static_cast<std::uint32_t>(clock64());
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(cta.start_ns));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(cta.sm));
  cta.parts = 0;
  cta.ring_tiles = 0;  // the copy issuer's count comes after the CTA's first barrier
  cta.mma_events = mma_events;
  cta.ring_stages = ring_stages;
  cta.work_known_clock = cta.q_issue_clock = cta.q_issued_clock = cta.start_clock;
  cta.merge_begin_clock = cta.merge_stats_clock = cta.merge_sent_clock = cta.start_clock;
  cta.merge_rows_clock = cta.merge_staged_clock = cta.merge_stored_clock = cta.start_clock;
#endif
}

// One event of ring tile `ring_index` (TimelineTile): now, by the calling thread, which the
// caller picks (one thread per event).
__device__ __forceinline__ void timeline_tile_event(
    [[maybe_unused]] const DecodeArgs& args, [[maybe_unused]] int ring_index,
    [[maybe_unused]] std::uint32_t TimelineTile::*event) {
#ifdef MLALAB_TIMELINE
  if (args.timeline == nullptr || ring_index >= kTimelineTiles) return;
  args.timeline[blockIdx.x].tile[ring_index].*event = static_cast<std::uint32_t>(clock64());
#endif
}

// One of the CTA's own events (CtaTimeline's *_clock): now, by the calling thread, which the
// caller picks.
__device__ __forceinline__ void timeline_cta_event(
    [[maybe_unused]] const DecodeArgs& args,
    [[maybe_unused]] std::uint32_t CtaTimeline::*event) {
#ifdef MLALAB_TIMELINE
  if (args.timeline != nullptr) {
    args.timeline[blockIdx.x].*event = static_cast<std::uint32_t>(clock64());
  }
#endif
}

// The copy issuer's count of the CTA's ring tiles, after its last.
__device__ __forceinline__ void timeline_ring_tiles([[maybe_unused]] const DecodeArgs& args,
                                                    [[maybe_unused]] int ring_tiles) {
#ifdef MLALAB_TIMELINE
  if (args.timeline != nullptr) args.timeline[blockIdx.x].ring_tiles = ring_tiles;
#endif
}

__device__ __forceinline__ void timeline_part_done([[maybe_unused]] const DecodeArgs& args,
                                                   [[maybe_unused]] const CtaWork& work) {
#ifdef MLALAB_TIMELINE
  if (threadIdx.x != 0 || args.timeline == nullptr) return;
  CtaTimeline& cta = args.timeline[blockIdx.x];
  const int index = cta.parts++;  // only thread 0 writes the record
  if (index >= kTimelineParts) return;
  TimelinePart& part = cta.part[index];
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(part.end_ns));
  part.end_clock = static_cast<std::uint32_t>(clock64());
  part.sequence = work.batch;
  part.steps = max(work.steps, 0);  // a split past its sequence's end computed none
  part.part_slot = work.part_slot;
#endif
}

using balanced::PartsCursor;

// The parts a CTA computes. A split launch's CTA has at most one: its split of one sequence.
// A balanced worker has one per sequence whose steps its share of the stream holds; the share is
// located from the live lengths by a block-wide scan, so a captured launch rebalances at every
// replay.
//
// Every variant compiles a kernel for each kBalanced. The split kernel computes its one part
// as before the balanced policy existed: no loop around the body, nothing carried across it.
// The balanced kernel loops over parts, its threads (the CTA, or one warpgroup of the wgmma
// family) walking them through a cursor in shared memory rather than registers, which the
// body needs (the register-bound tiles spilled).
template <int kBlockH, int kBlockT, int kThreads, bool kBalanced>
struct CtaParts {
  static __device__ int steps_of(int seq_len) { return (seq_len + kBlockT - 1) / kBlockT; }

  // A split CTA's part: its split of one sequence, with no steps when the split is past the
  // sequence's end (the CTA then writes its empty result: write_empty_result).
  static __device__ CtaWork split_part(const DecodeArgs& args) {
    return split_part(args, blockIdx.x);
  }
  // The same for the CTA at `block` of the grid's order: batch, then split, then head block.
  static __device__ CtaWork split_part(const DecodeArgs& args, int block) {
    static_assert(!kBalanced);
    CtaWork work{};
    const int split = block / args.head_blocks % args.num_splits;
    work.head0 = block % args.head_blocks * kBlockH;
    work.batch = block / (args.head_blocks * args.num_splits);
    const int seq_len = args.params.seq_lens[work.batch];
    const int steps_per_split = (steps_of(seq_len) + args.num_splits - 1) / args.num_splits;
    const int step_begin = split * steps_per_split;
    work.steps = min(steps_of(seq_len), step_begin + steps_per_split) - step_begin;
    work.token_begin = step_begin * kBlockT;
    work.token_end = seq_len;
    work.part_slot = args.num_splits == 1 ? -1 : split * args.params.batch + work.batch;
    return work;
  }

  // Where a balanced worker's parts start: its share [worker_begin(w), worker_begin(w + 1)) of
  // the stream. Called by every thread before anything else uses shared memory; `scratch` is
  // shared memory free until this returns. Two passes over the lengths, kThreads at a time:
  // the first sums their costs (T), the second finds each sequence's start in the stream.
  // Head block 0's CTA also writes the SequenceParts of the sequences this worker records,
  // for the combine.
  static __device__ PartsCursor start(const DecodeArgs& args, void* scratch) {
    static_assert(kBalanced);
    using Scan = cub::BlockScan<long long, kThreads>;
    struct Shared {
      typename Scan::TempStorage scan;
      int first_batch;
      int first_offset;
    };
    Shared& shared = *static_cast<Shared*>(scratch);
    const DecodeParams& p = args.params;
    // One chunk's costs, their exclusive prefix sums within the chunk, and the chunk's total.
    const auto scan_chunk = [&](int base, long long& cost, long long& start) {
      const int b = base + static_cast<int>(threadIdx.x);
      cost = b < p.batch ? balanced::sequence_cost(steps_of(p.seq_lens[b]), args.part_start_cost)
                         : 0;
      long long chunk_total = 0;
      Scan(shared.scan).ExclusiveSum(cost, start, chunk_total);
      __syncthreads();  // the temporary storage is reused by the next chunk
      return chunk_total;
    };
    // A batch of up to kThreads sequences (every serving batch here) is read once.
    long long first_cost = 0;
    long long first_start = 0;
    const long long first_total = scan_chunk(0, first_cost, first_start);
    long long total = first_total;
    for (int base = kThreads; base < p.batch; base += kThreads) {
      long long cost = 0;
      long long start = 0;
      total += scan_chunk(base, cost, start);
    }

    PartsCursor share{.batch = 0, .offset = 0, .remaining = 0};
    const int worker = blockIdx.x / args.head_blocks;
    const int workers = balanced::active_workers(args.workers, total);
    if (worker >= workers) return share;  // fewer positions than workers: no share or records
    const long long begin = balanced::worker_begin(worker, workers, total);
    share.remaining = balanced::worker_begin(worker + 1, workers, total) - begin;
    const bool records = head0(args) == 0;
    long long carry = 0;
    for (int base = 0; base < p.batch; base += kThreads) {
      long long cost = first_cost;
      long long start = first_start;
      const long long chunk_total = base == 0 ? first_total : scan_chunk(base, cost, start);
      start += carry;
      carry += chunk_total;
      const int b = base + static_cast<int>(threadIdx.x);
      if (b >= p.batch) continue;
      if (start <= begin && begin < start + cost) {  // exactly one sequence holds it
        shared.first_batch = b;
        shared.first_offset = static_cast<int>(begin - start);
      }
      if (records && balanced::records_sequence(worker, workers, total, start)) {
        args.sequence_parts[b] =
            balanced::sequence_parts(b, start, cost, args.part_start_cost, workers, total);
      }
    }
    __syncthreads();
    share.batch = shared.first_batch;
    share.offset = shared.first_offset;
    __syncthreads();  // every thread has read the scratch before the caller reuses it
    return share;
  }

  // A balanced worker's next part, from a cursor in shared memory that a group of threads
  // walks together; false when the share is used up. Every thread of the group calls it;
  // `barrier` synchronises the group and `leader` is one of its threads.
  template <typename GroupBarrier>
  static __device__ bool next(const DecodeArgs& args, PartsCursor& shared_cursor, bool leader,
                              GroupBarrier barrier, CtaWork& work) {
    static_assert(kBalanced);
    PartsCursor cursor = shared_cursor;
    const bool found = take(args, cursor, work);
    barrier();  // every thread of the group has read the cursor ...
    if (leader) shared_cursor = cursor;
    barrier();  // ... and sees it advanced
    return found;
  }

 private:
  // The part at `cursor`, which then moves past it (and past empty sequences, and sequences
  // of which the share holds start positions only); false when there is none left.
  static __device__ bool take(const DecodeArgs& args, PartsCursor& cursor, CtaWork& work) {
    const DecodeParams& p = args.params;
    const int start_cost = args.part_start_cost;
    while (cursor.remaining > 0 && cursor.batch < p.batch) {
      const int seq_len = p.seq_lens[cursor.batch];
      const int seq_steps = steps_of(seq_len);
      const int seq_cost = static_cast<int>(balanced::sequence_cost(seq_steps, start_cost));
      const int taken =
          static_cast<int>(min(static_cast<long long>(seq_cost - cursor.offset), cursor.remaining));
      // The steps among the positions [offset, offset + taken) of the sequence's range.
      const int first_step = max(cursor.offset - start_cost, 0);
      const int end_step = max(cursor.offset + taken - start_cost, 0);
      const int steps = end_step - first_step;
      const bool whole_sequence = first_step == 0 && end_step == seq_steps;
      work.head0 = head0(args);
      work.batch = cursor.batch;
      work.token_begin = first_step * kBlockT;
      work.token_end = min(seq_len, end_step * kBlockT);
      work.steps = steps;
      work.part_slot = whole_sequence ? -1
                                      : static_cast<int>(balanced::part_slot(
                                            blockIdx.x / args.head_blocks, cursor.batch));
      cursor.remaining -= taken;
      cursor.offset += taken;
      if (cursor.offset == seq_cost) {
        ++cursor.batch;
        cursor.offset = 0;
      }
      if (steps > 0) return true;
    }
    return false;
  }

  static __device__ int head0(const DecodeArgs& args) {
    return blockIdx.x % args.head_blocks * kBlockH;
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
      const bool valid = token < work_.token_end &&
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
    if (token >= work_.token_end) return -1;
    return p.page_table[work_.batch * p.page_table_stride + (token >> args_.page_shift)];
  }

  const DecodeArgs& args_;
  const CtaWork& work_;
  int first_row_;
  int row_stride_;
  int next_page_[kRows];
};

// Where one head row of a CTA's result goes: its part's fp32 partial out and lse when the
// part is one of several of its sequence, else the final bf16 out and lse.
struct ResultSlot {
  long long row_index;  // batch · num_heads + head: the final result's row
  long long part_row;   // the partial result's row, or −1 when the result is final
  bf16* out_row;        // the final out's row (unused for a partial)

  __device__ ResultSlot(const DecodeArgs& args, const CtaWork& work, int head)
      : row_index(static_cast<long long>(work.batch) * args.params.num_heads + head),
        part_row(work.partial()
                     ? static_cast<long long>(work.part_slot) * args.params.num_heads + head
                     : -1),
        out_row(args.params.out + work.batch * args.params.out_batch_stride +
                head * args.params.out_head_stride) {}

  __device__ bool partial() const { return part_row >= 0; }

  __device__ void store_lse(const DecodeArgs& args, float lse) const {
    if (partial()) {
      args.partial_lse[part_row] = lse;
    } else {
      args.params.lse[row_index] = lse;
    }
  }
};

// One head row's result: out normalised by the row's sum (a split partial by the split's own
// sum), and lse; the sink joins the denominator of a final result only (the combine adds it
// for split launches). row_max and row_sum are base 2. The destination is resolved once, into
// registers: computed from the launch arguments in store(), it was reloaded after every
// global store (the compiler cannot tell that they do not alias), which made the production
// kernel 5 % slower at batch 1, where the epilogue is most of a CTA's work
// (docs/perf-notes.md, version 7).
class ResultRow {
 public:
  __device__ ResultRow(const DecodeArgs& args, const CtaWork& work, int head, float row_max,
                       float row_sum) {
    const DecodeParams& p = args.params;
    const ResultSlot slot(args, work, head);
    float denominator = row_sum;
    if (!slot.partial() && p.sink_logits != nullptr) {
      denominator += exp2f(p.sink_logits[head] * kLog2e - row_max);
    }
    inverse_ = 1.0f / denominator;
    lse_ = (row_max + log2f(row_sum)) * kLn2;
    partial_row_ = slot.partial() ? args.partial_out + slot.part_row * p.d_v : nullptr;
    out_row_ = slot.out_row;
    lse_slot_ = slot.partial() ? args.partial_lse + slot.part_row : p.lse + slot.row_index;
  }

  // Columns `column` and `column + 1` of O, not yet normalised.
  __device__ void store(int column, float o0, float o1) const {
    if (partial_row_ != nullptr) {
      *reinterpret_cast<float2*>(partial_row_ + column) =
          make_float2(o0 * inverse_, o1 * inverse_);
    } else {
      *reinterpret_cast<std::uint32_t*>(out_row_ + column) =
          portable::pack_bf16x2(o0 * inverse_, o1 * inverse_);
    }
  }

  __device__ void store_lse() const { *lse_slot_ = lse_; }
  // What store() multiplies O by (a kernel that stores the row its own way).
  __device__ float inverse() const { return inverse_; }

 private:
  float* partial_row_;  // the part's fp32 row, or nullptr: the result is final
  bf16* out_row_;
  float* lse_slot_;
  float lse_;  // natural log
  float inverse_;
};

// The result of a split CTA without tokens (its split is past the sequence's end, or the
// sequence is empty): out = 0, lse = −inf. A split partial only needs its −inf lse: the
// combine gives it zero weight without reading its out. (A balanced launch's empty sequences
// are written by the combine.)
template <int kBlockH, int kThreads>
__device__ void write_empty_result(const DecodeArgs& args, const CtaWork& work) {
  const DecodeParams& p = args.params;
  for (int row = threadIdx.x; row < kBlockH; row += kThreads) {
    const int head = work.head0 + row;
    if (head < p.num_heads) ResultSlot(args, work, head).store_lse(args, -INFINITY);
  }
  if (!work.partial()) {
    const int vectors_per_row = p.d_v / 8;
    for (int i = threadIdx.x; i < kBlockH * vectors_per_row; i += kThreads) {
      const int head = work.head0 + i / vectors_per_row;
      if (head >= p.num_heads) continue;
      reinterpret_cast<uint4*>(ResultSlot(args, work, head).out_row)[i % vectors_per_row] =
          make_uint4(0, 0, 0, 0);
    }
  }
}

// Raises a kernel's dynamic shared-memory limit once per size (not a stream operation, so it
// is also safe while a graph is being captured).
template <auto kKernel>
cudaError_t allow_smem(int smem_bytes) {
  static std::atomic<int> configured_smem_bytes{0};
  if (smem_bytes <= configured_smem_bytes.load()) return cudaSuccess;
  const cudaError_t status =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (status == cudaSuccess) configured_smem_bytes.store(smem_bytes);
  return status;
}

// A family whose kernels take DecodeArgs as they are.
struct PlainArgs {
  const DecodeArgs& operator()(const DecodeArgs& args) const { return args; }
};

// How a family's decode kernels follow the kernel before them in the stream: plainly, or as
// a dependent launch (grid_dependency.cuh), for kernels whose first statement is
// wait_for_prior_grid().
enum class LaunchOrder { kPlain, kDependent };

// The host side of a decode launch, shared by every variant of every family: kSplitKernel
// for split launches, kBalancedKernel for balanced ones. `kernel_args` turns the validated
// DecodeArgs into the kernels' parameter (a family may add to them: the wgmma family's
// tensor map). `part_start_cost`: what starting a part costs a balanced worker, in the
// variant's steps (balanced_partition.h's start_cost).
template <auto kSplitKernel, auto kBalancedKernel, LaunchOrder kOrder = LaunchOrder::kPlain,
          bool kMergesSplitPairs = false, typename KernelArgs = PlainArgs>
LaunchStatus launch_decode(int block_h, int threads, int smem_bytes, const DecodeParams& params,
                           const LaunchPlan& plan, void* workspace, cudaStream_t stream,
                           KernelArgs kernel_args = {}, int part_start_cost = kPrologueSteps) {
  const int head_blocks = (params.num_heads + block_h - 1) / block_h;
  const bool plan_matches =
      plan.head_blocks == head_blocks &&
      (plan.balanced()
           ? plan.workers <= kMaxBalancedWorkers && plan.num_splits == 1 &&
                 plan.ctas == head_blocks * plan.workers
           : plan.num_splits >= 1 && plan.num_splits <= kMaxSplits &&
                 plan.ctas == params.batch * head_blocks * plan.num_splits) &&
      (!plan.split_pairs || (kMergesSplitPairs && plan.num_splits == 2));
  const bool needs_workspace = plan.balanced() || plan.partial_splits() > 1;
  if (validate_shapes(params) || !plan_matches || (plan.timeline && !kTimelineBuild) ||
      ((needs_workspace || plan.timeline) && workspace == nullptr)) {
    return {.error = cudaErrorInvalidValue, .refusal = LaunchRefusal::kInvalidInput};
  }
  // Decided before asking CUDA, which answers cudaErrorInvalidValue here as for a bad input.
  const int smem_limit = current_device().smem_optin_bytes;
  if (smem_limit > 0 && smem_bytes > smem_limit) {
    return {.error = cudaErrorInvalidValue, .refusal = LaunchRefusal::kCannotRunHere};
  }
  if (const cudaError_t status = plan.balanced() ? allow_smem<kBalancedKernel>(smem_bytes)
                                                 : allow_smem<kSplitKernel>(smem_bytes);
      status != cudaSuccess) {
    return {.error = status, .refusal = LaunchRefusal::kNone};
  }

  DecodeArgs args{.params = params,
                  .head_blocks = plan.head_blocks,
                  .num_splits = plan.num_splits,
                  .workers = plan.workers,
                  .part_start_cost = part_start_cost,
                  .page_shift = __builtin_ctz(static_cast<unsigned>(params.page_size)),
                  .scale_log2 = params.softmax_scale * kLog2e,
                  .partial_out = nullptr,
                  .partial_lse = nullptr,
                  .sequence_parts = nullptr,
                  .split_pairs = plan.split_pairs};
  if (needs_workspace) {
    const WorkspaceLayout layout =
        workspace_layout(plan.partial_splits(), plan.workers, params.batch, params.num_heads);
    if (plan.balanced()) args.sequence_parts = static_cast<balanced::SequenceParts*>(workspace);
    args.partial_out = reinterpret_cast<float*>(static_cast<std::byte*>(workspace) +
                                                layout.partial_out_offset);
    args.partial_lse = args.partial_out + layout.partial_rows * params.d_v;
  }
#ifdef MLALAB_TIMELINE
  args.timeline = plan.timeline ? reinterpret_cast<CtaTimeline*>(
                                      static_cast<std::byte*>(workspace) +
                                      timeline_offset(plan, params.batch, params.num_heads,
                                                      params.d_v))
                                : nullptr;
#endif
  cudaLaunchAttribute attributes[2];
  cudaLaunchConfig_t config =
      launch_config(stream, kOrder == LaunchOrder::kDependent, attributes[0]);
  if (plan.split_pairs) {
    cudaLaunchAttribute& cluster = attributes[config.numAttrs++];
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim = {.x = 2, .y = 1, .z = 1};
    config.attrs = attributes;
  }
  config.gridDim = dim3(static_cast<unsigned>(plan.ctas));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
  cudaError_t status = plan.balanced()
                           ? cudaLaunchKernelEx(&config, kBalancedKernel, kernel_args(args))
                           : cudaLaunchKernelEx(&config, kSplitKernel, kernel_args(args));
  if (status == cudaSuccess && needs_workspace) {
    status = launch_combine(params, plan.num_splits, args.partial_out, args.partial_lse,
                            args.sequence_parts, stream);
  }
  return {.error = status, .refusal = LaunchRefusal::kNone};
}

}  // namespace mlalab::kernels
