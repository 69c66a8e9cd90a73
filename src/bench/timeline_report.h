#pragma once
// What `mlalab bench --timeline` makes of a row's per-CTA records (kernels/timeline.h): times
// relative to the first CTA's start, each CTA's end (its last part's), and the CTAs grouped by
// their number of parts, which is how a balanced launch's time splits (a worker that starts
// more sequences ends later).
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "kernels/timeline.h"

namespace mlalab::bench {

struct PartsGroup {
  int ctas = 0;
  double mean_end_us = 0.0;
  double max_end_us = 0.0;
};

struct TimelineSummary {
  int ctas = 0;
  double last_start_us = 0.0;  // the latest CTA start (one wave: how long the grid took to
                               // start; more: when the last wave began)
  double min_end_us = 0.0;
  double median_end_us = 0.0;
  double max_end_us = 0.0;
  std::map<int, PartsGroup> by_parts{};  // key: parts of the CTA
  int truncated_ctas = 0;                // CTAs with more parts than kTimelineParts recorded
  // The SMs' clock over the CTAs (their cycles from start to last part over the nanoseconds),
  // MHz: the rate at which the ring's cycles were counted. 0 where no CTA ran 1 µs or more.
  double min_clock_mhz = 0.0;
  double median_clock_mhz = 0.0;
  double max_clock_mhz = 0.0;
};

// The wgmma family's ring (kernels/timeline.h, TimelineTile), over the recorded tiles that reuse
// a stage (tile t ≥ stages, whose stage tile t − stages freed), in SM cycles: each figure's
// median and 10th / 90th percentiles across those tiles of all CTAs.
struct Spread {
  double median = 0.0;
  double p10 = 0.0;
  double p90 = 0.0;
  double mean = 0.0;  // what throughput follows where tiles alternate between two kinds
  int tiles = 0;      // the tiles it is over (0: not recorded)
};

// The MMA warps' figures of the tiles of one stage (tile t uses stage t mod stages). In the
// 64-token pair order a stage's tiles are one group's, and the two groups' tiles differ
// (docs/perf-notes.md, version 51): the spreads over all tiles mix the two.
struct StageRing {
  Spread tile_period;  // its first piece landed, after the tile before's (of any stage)
  Spread mma_wait;
};

// A wgmma CTA's start, in SM cycles from the CTA's first record (CtaTimeline's prologue
// events and its first tile's): what it does before its first tile is in.
struct RingPrologue {
  Spread work_known;     // thread 0 knew the CTA's work
  Spread q_issued;       // the copy issuer had issued q's copy (where q goes by TMA)
  Spread first_issued;   // ... the first tile's first piece
  Spread first_landed;   // that piece landed (where the MMA warps record events)
};

// A split pair's merge (the 64-head kernel's clusters of two), in SM cycles from its entry
// (after the CTA's last tile and the row sums): where each step ends for the CTA's thread 0.
struct PairMerge {
  Spread stats_landed;  // the other CTA's row statistics
  Spread shares_sent;   // this CTA's share of the other's columns sent
  Spread rows_landed;   // the other's share of this CTA's columns
  Spread staged;        // the final rows staged in shared memory
  Spread stored;        // and thread 0's bulk copy has read its row
};

struct RingSummary {
  int ctas = 0;   // CTAs with such tiles
  int tiles = 0;  // their tiles that reuse a stage
  Spread stage_wait;      // the copy issuer waited for the stage and issued the first piece
  Spread tile_period;     // between the first pieces' landings of consecutive tiles
  Spread mma_wait;        // the MMA warps asked for the tile until the piece their S begins
                          // on had landed (the first; the rest where they wait for it first)
  Spread issue_to_landed; // first piece issued → landed, where the MMA warps were already
                          // waiting (elsewhere only its landing's upper bound is known)
  Spread free_to_issue;   // the stage's first piece freed (group 0's warp 0) → the next copy issued
  Spread free_to_seen;    // ... → the copy issuer's wait for that free returned
  Spread issue_time;      // that wait's return → the first piece issued
  Spread free_to_ask;     // the stage's first piece freed → the MMA warps asked for the next tile
  Spread rest_after_first;  // the rest's wait returned, after the first piece's
  std::vector<StageRing> by_stage;  // per stage, where the MMA warps record their events
  RingPrologue prologue;  // over every CTA with a recorded tile
  PairMerge merge;        // over the CTAs that merged as a pair (tiles = 0: none)
};

// tiles = 0 when no record has a ring (a portable kernel's, or no timeline build); the MMA
// warps' figures have tiles = 0 where the kernel does not record them (the swapped kernel).
RingSummary summarize_ring(const std::vector<kernels::CtaTimeline>& records);

// "ring, 5,760 tiles of 128 CTAs that reuse a stage, SM cycles, median [10th, 90th]: ...", or
// "" when no tile was recorded.
std::string ring_summary_text(const RingSummary& summary);

// ctas = 0 when there are no records. A CTA's end is its last recorded part's, or its start
// when it had none (a balanced worker without a share).
TimelineSummary summarize_timeline(const std::vector<kernels::CtaTimeline>& records);

// "132 CTAs: started within 0.1 µs, ended at 170.8 / 177.8 / 190.1 µs (min / median / max);
// by parts: 1: 26 CTAs, mean 172.9, max 174.3; ...; SM clock 1,710 / 1,755 / 1,770 MHz", for
// the row's line under the table.
std::string timeline_summary_text(const TimelineSummary& summary);

// The rows with a timeline, each with its shape, its CTAs (sm, start and parts in µs from the
// first start; the ring's tile events in cycles from the CTA's start) and its summaries, for
// --timeline FILE.
nlohmann::json timeline_json(const std::vector<BenchRow>& rows);

}  // namespace mlalab::bench
