#pragma once
// The balanced split policy's partition of a batch: constexpr arithmetic shared by the decode
// kernels (which apply it to the live sequence lengths at every launch, so one captured graph
// stays balanced whatever the lengths), the combine, and the host tests of its invariants.
//
// The batch's work forms one stream of block_t-token steps (what a CTA loads and computes at a
// time), sequence after sequence: a sequence of len(b) tokens is steps(b) = ⌈len(b) / block_t⌉
// steps, and position x of the stream is step x − start(b) of the sequence b whose range
// [start(b), start(b) + steps(b)) holds it. A launch has a fixed number of workers (CTAs per
// head block), of which the first
//     W = min(workers, T), at least 1,        T = Σ steps(b),
// share the stream: worker w < W owns the positions [⌊w·T / W⌋, ⌊(w+1)·T / W⌋), so every
// step is owned exactly once, two workers' loads differ by at most one step (block_t tokens:
// within one page when block_t ≤ page_size), and every share holds a step (the workers a
// sequence touches are consecutive). Shares are whole steps so that a cut inside a sequence
// costs no partly masked step on either side.
// A worker's share may cross sequence boundaries: it then computes one part per sequence it
// touches. A sequence touched by one worker gets its final result from that worker; one cut
// into several parts gets partial results that the combine merges.
//
// Part (worker w, sequence b) writes to slot w + b of the workspace: along the stream, each new
// part advances w, b or both, so the slots are distinct, a sequence's parts are consecutive,
// and W + B − 1 slots hold every part.
#include <cstdint>

namespace mlalab::kernels::balanced {

// W: the workers that share a stream of `total_steps` steps. The functions below take it.
constexpr int active_workers(int workers, std::int64_t total_steps) {
  return total_steps < workers ? (total_steps > 0 ? static_cast<int>(total_steps) : 1) : workers;
}

// First stream position of worker `worker` (worker == workers: the end of the stream).
// Here and below `workers` is W, the active workers.
constexpr std::int64_t worker_begin(int worker, int workers, std::int64_t total_steps) {
  return static_cast<std::int64_t>(worker) * total_steps / workers;
}

// The worker that owns stream position `position` < total_steps: the last w with
// worker_begin(w) ≤ position, i.e. ⌈(position + 1)·W / T⌉ − 1.
constexpr int owner_of(std::int64_t position, int workers, std::int64_t total_steps) {
  return static_cast<int>(((position + 1) * workers - 1) / total_steps);
}

constexpr std::int64_t part_slot(int worker, int batch_index) {
  return static_cast<std::int64_t>(worker) + batch_index;
}

constexpr std::int64_t part_slots(int workers, int batch) {
  return static_cast<std::int64_t>(workers) + batch - 1;
}

// Where the combine finds a sequence's parts: slots first_slot … first_slot + count − 1.
// count 0: an empty sequence (the combine writes out = 0, lse = −inf); count 1: the one worker
// wrote the final result and the combine leaves it.
struct SequenceParts {
  std::int32_t first_slot;
  std::int32_t count;
};

// Where a balanced worker stands in its share: the next part's sequence and first
// block_t-token step, and the steps of the share not yet handed out. It lives in the kernels'
// dynamic shared memory (their SmemPlan's cursor region), not in a static __shared__
// variable: static shared memory comes first and moves the dynamic base, and 128 bytes of it
// made the wgmma kernel 8.5 % slower on the same work (docs/perf-notes.md, version 5).
struct PartsCursor {
  int batch;
  int step;
  long long remaining;
};

constexpr SequenceParts sequence_parts(int batch_index, std::int64_t start, std::int64_t length,
                                       int workers, std::int64_t total_steps) {
  if (length == 0) return {0, 0};
  const int first = owner_of(start, workers, total_steps);
  const int last = owner_of(start + length - 1, workers, total_steps);
  return {static_cast<std::int32_t>(part_slot(first, batch_index)), last - first + 1};
}

// Whether worker `worker` records the SequenceParts of the sequence starting at stream
// position `start`: the worker whose range holds that position, or the last worker for a
// sequence at the stream's end (empty sequences there, or T = 0). Exactly one worker does.
constexpr bool records_sequence(int worker, int workers, std::int64_t total_steps,
                                std::int64_t start) {
  if (start == total_steps) return worker == workers - 1;
  return worker_begin(worker, workers, total_steps) <= start &&
         start < worker_begin(worker + 1, workers, total_steps);
}

}  // namespace mlalab::kernels::balanced
