#pragma once
// `mlalab tune`: builds or updates a tuning table for one (layout, heads, page size) on this
// GPU. For every key (batch bucket × context bucket), in order:
//   1. the problem: `batch` sequences of `context` tokens (or of lengths drawn up to it:
//      bench::drawn_lengths), pages scattered, inputs random, replicated over ≥ 4 × L2 so
//      that every timed call reads its KV from HBM (as bench and the A/B lab time a call);
//      launches are planned for `context`, as a Dispatcher plans them for its key;
//   2. the candidates: every candidate variant that judge_here finds feasible (the others are
//      pruned once, with their reasons), each with the splits of candidate_splits;
//   3. each candidate checked once against the fp64 reference (a wrong one is dropped, with
//      the mismatch as its outcome), then raced (race.h): a sample is the median over
//      `launches_per_sample` CUDA-graph replays of one call per replica.
// The table is handed to `on_key_done` after every key, so that an interrupted run keeps what
// it measured.
#include <atomic>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/layout.h"
#include "dispatch/tuning_table.h"
#include "kernels/split_plan.h"
#include "tune/race.h"

namespace mlalab::tune {

struct TuneRequest {
  Layout layout = Layout::kV3;
  int num_heads = 16;
  int page_size = 64;
  std::vector<int> batches{};    // the batch buckets, ascending
  std::vector<int> contexts{};   // the context buckets, ascending
  dispatch::TunedLengths lengths{};       // each key's sequence lengths
  std::vector<std::string> candidates{};  // variant names; empty: every compiled variant
  std::optional<int> smem_limit{};        // bytes: prune as if a CTA could have no more
  RaceSettings race{};
  int launches_per_sample = 5;
  std::uint64_t seed = 1;  // of the inputs and the page order
};

// Split counts raced for a variant at a key: the heuristic's choice h (kernels/split_plan.h),
// h / 2 and 2 · h, the most splits that still fit in one wave of resident CTAs, and 1 (no
// combine), each capped so that every split has a step of tokens; ascending, distinct.
std::vector<int> split_candidates(const kernels::SplitShape& shape, int sm_count,
                                  int ctas_per_sm);

// Everything a variant races at a key: split_candidates as fixed splits, then, when its
// balanced kernel fits on an SM, the balanced launch (one wave of workers sharing the batch's
// tokens): where no split count fills whole waves, e.g. at H = 128 with one 64-head CTA per
// SM, batch 80 makes 160 CTAs per split.
std::vector<SplitPolicy> candidate_splits(const kernels::SplitShape& shape, int sm_count,
                                          int ctas_per_sm, bool balanced_resident);

struct TuneSummary {
  dispatch::TuningTable table;
  int keys_tuned = 0;
  double seconds = 0.0;
  long long samples = 0;              // timed samples taken
  long long samples_without_halving = 0;  // had every candidate raced every round
  bool interrupted = false;           // stopped by the stop signal before every key was tuned
};

// Tunes every key of the request on the current GPU. `existing`, when given, is the table to
// update: its identity must match this run's (else TableError naming the field), its entries
// for other keys are kept, and its entry for a tuned key races as the incumbent. Throws
// std::invalid_argument for a bad request (naming the field) and std::runtime_error without a
// usable GPU or when no candidate is feasible. When *stop_signal becomes nonzero (the CLI's
// SIGINT handler sets it) the run ends after the current sample with interrupted set; the keys
// tuned before stay in the table.
TuneSummary tune(const TuneRequest& request, std::optional<dispatch::TuningTable> existing,
                 const std::function<void(const dispatch::TuningTable&)>& on_key_done,
                 std::ostream& progress, const std::atomic<int>* stop_signal = nullptr);

}  // namespace mlalab::tune
