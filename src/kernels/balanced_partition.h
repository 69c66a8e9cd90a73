#pragma once
// The balanced split policy's partition of a batch: constexpr arithmetic shared by the decode
// kernels (which apply it to the live sequence lengths at every launch, so one captured graph
// stays balanced whatever the lengths), the combine, and the host tests of its invariants.
//
// The batch's work forms one stream, sequence after sequence, measured in block_t-token steps
// (what a CTA loads and computes at a time). A sequence of len(b) tokens has
// steps(b) = ⌈len(b) / block_t⌉ steps and costs
//     cost(b) = start_cost + steps(b)   (0 for an empty sequence)
// positions of the stream: first start_cost positions for starting it, then one per step, so
// step k of b is at position start(b) + start_cost + k, where [start(b), start(b) + cost(b))
// is b's range. The start positions charge the worker that owns them for starting a part of b
// (nearly always the worker that computes b's first step): loading q and refilling the
// pipeline before the part's first step, writing its result after the last. Each family says
// what that costs in its steps (launch_decode's part_start_cost): about two steps' time (the
// split heuristic's kPrologueSteps; per-CTA timelines of the wgmma kernel at H = 128 measured
// 2.2-2.7 of its 64-token steps per extra part, docs/perf-notes.md, version 21), six of the
// seesaw's 32-token steps (wgmma/traits.h).
// Counting steps alone, a worker whose share touches four sequences finished 12 µs after one
// touching a single sequence at H = 128, B = 64.
//
// A launch has a fixed number of workers (CTAs per head block), of which the first
//     W = min(workers, T), at least 1,        T = Σ cost(b),
// share the stream: worker w < W owns the positions [⌊w·T / W⌋, ⌊(w+1)·T / W⌋), so every
// position is owned exactly once and two workers' positions differ by at most one. A worker
// computes the steps it owns; its load, those steps plus start_cost for every part after its
// first (each of which starts a sequence), is within 2 · start_cost + 1 of any other's (a
// share may begin or end among a sequence's start positions). Positions are whole steps so that
// a cut inside a sequence costs no partly masked step on either side.
// A worker's share may cross sequence boundaries: it then computes one part per sequence whose
// steps it touches (a share of start positions only has no part). A sequence touched by one
// worker gets its final result from that worker; one cut into several parts gets partial
// results that the combine merges. The workers a sequence's steps touch are consecutive.
//
// Part (worker w, sequence b) writes to slot w + b of the workspace: along the stream, each new
// part advances w, b or both, so the slots are distinct, a sequence's parts are consecutive,
// and W + B − 1 slots hold every part.
#include <cstdint>

namespace mlalab::kernels::balanced {

// cost(b): the stream positions of a sequence of `steps` steps.
constexpr std::int64_t sequence_cost(std::int64_t steps, int start_cost) {
  return steps > 0 ? steps + start_cost : 0;
}

// W: the workers that share a stream of `total` positions. The functions below take it.
constexpr int active_workers(int workers, std::int64_t total) {
  return total < workers ? (total > 0 ? static_cast<int>(total) : 1) : workers;
}

// First stream position of worker `worker` (worker == workers: the end of the stream).
// Here and below `workers` is W, the active workers.
constexpr std::int64_t worker_begin(int worker, int workers, std::int64_t total) {
  return static_cast<std::int64_t>(worker) * total / workers;
}

// The worker that owns stream position `position` < total: the last w with
// worker_begin(w) ≤ position, i.e. ⌈(position + 1)·W / T⌉ − 1.
constexpr int owner_of(std::int64_t position, int workers, std::int64_t total) {
  return static_cast<int>(((position + 1) * workers - 1) / total);
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

// Where a balanced worker stands in its share: the next part's sequence, the position within
// that sequence's range (start positions first, then steps), and the positions of the share
// not yet handed out. It lives in the kernels' dynamic shared memory (their SmemPlan's cursor
// region), not in a static __shared__ variable: static shared memory comes first and moves the
// dynamic base, and 128 bytes of it made the wgmma kernel 8.5 % slower on the same work
// (docs/perf-notes.md, version 5).
struct PartsCursor {
  int batch;
  int offset;
  long long remaining;
};

// The parts of the sequence whose range is [start, start + cost): those of the workers that
// own its first and last steps, and of every worker between.
constexpr SequenceParts sequence_parts(int batch_index, std::int64_t start, std::int64_t cost,
                                       int start_cost, int workers, std::int64_t total) {
  if (cost == 0) return {0, 0};
  const int first = owner_of(start + start_cost, workers, total);
  const int last = owner_of(start + cost - 1, workers, total);
  return {static_cast<std::int32_t>(part_slot(first, batch_index)), last - first + 1};
}

// Whether worker `worker` records the SequenceParts of the sequence starting at stream
// position `start`: the worker whose range holds that position, or the last worker for a
// sequence at the stream's end (empty sequences there, or T = 0). Exactly one worker does.
constexpr bool records_sequence(int worker, int workers, std::int64_t total, std::int64_t start) {
  if (start == total) return worker == workers - 1;
  return worker_begin(worker, workers, total) <= start &&
         start < worker_begin(worker + 1, workers, total);
}

}  // namespace mlalab::kernels::balanced
