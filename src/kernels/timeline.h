#pragma once
// Per-CTA timelines of a decode launch, for `mlalab bench --timeline`: when each CTA started,
// and when it finished each of its parts (a split, or a sequence of a balanced worker's share),
// read from %globaltimer, with the part's sequence, steps and partial-result slot; in the
// wgmma family also each KV tile's way through the ring (TimelineTile). They show
// what a launch's time is made of: a balanced launch's CTAs ending by their number of parts,
// or a tail of late CTAs (docs/perf-notes.md, versions 21-22, found this way).
//
// Only a build configured with -DMLALAB_TIMELINE=ON records them: its kernels read the timer
// and store the records, so their code (and code hashes) differ from a normal build's, whose
// kernels contain none of it. A plan asks for a timeline with with_timeline(); the records
// then live at the end of the launch's workspace, one CtaTimeline per CTA, rewritten by every
// launch.
#include <cstddef>
#include <cstdint>

#include "kernels/split_plan.h"

namespace mlalab::kernels {

#ifdef MLALAB_TIMELINE
inline constexpr bool kTimelineBuild = true;
#else
inline constexpr bool kTimelineBuild = false;
#endif

struct TimelinePart {
  // %globaltimer when thread 0 had issued its share of the part's result (in the wgmma
  // kernel's balanced loop: after the MMA warps' barrier, so all of them had)
  std::uint64_t end_ns;
  std::int32_t sequence;   // the part's batch entry
  std::int32_t steps;      // its block_t-token steps (0: a split past its sequence's end)
  std::int32_t part_slot;  // its partial-result slot, or −1: it wrote the final result
  // The low 32 bits of the SM's %clock64 at end_ns: with the CTA's start_clock and start_ns,
  // the clock's rate over the CTA, which converts the ring's cycles into time (under load the
  // SM may run below its top clock).
  std::uint32_t end_clock;
};

// Parts recorded per CTA: the first kTimelineParts; `parts` counts them all, so a CTA with more
// says so (and its recorded end is then its kTimelineParts-th part's).
inline constexpr int kTimelineParts = 15;

// The wgmma family's ring, per KV tile (the first kTimelineTiles tiles a CTA's ring takes, over
// all its parts): when its stage's copy and reads began and ended, in the low 32 bits of the
// SM's %clock64 (cycles; every warp of a CTA reads the same SM's clock, and %globaltimer's
// steps are too coarse for a tile of ~2 µs). They say where a tile's time goes: from its
// stage's free to its copy's issue (the issuer's wake-up), from the issue to its first piece
// landing, and how long before or after that the MMA warps asked for it.
struct TimelineTile {
  std::uint32_t free_wait;      // the copy issuer begins waiting for the stage (tiles >= stages)
  std::uint32_t first_free;     // its wait for the first piece's free returned
  std::uint32_t first_issued;   // it has issued the tile's first piece (a cp.async tile: all of it)
  std::uint32_t rest_free;      // its wait for the rest's free returned
  std::uint32_t rest_issued;    // it has issued the rest
  std::uint32_t landed_wait;    // warp 0 of the group whose S reads the tile begins waiting
  std::uint32_t first_landed;   // ... for its first piece: the wait returned
  std::uint32_t rest_landed;    // ... for the rest: the wait returned
  std::uint32_t first_freed;    // warp 0 of group 0 frees the first piece (1 of 4 arrivals)
  std::uint32_t rest_freed;     // warp 0 of group 1 frees the rest
};

// Ring tiles recorded per CTA: the first kTimelineTiles; `ring_tiles` counts them all.
inline constexpr int kTimelineTiles = 48;

struct CtaTimeline {
  std::uint64_t start_ns;  // %globaltimer when the CTA began
  std::uint32_t sm;        // %smid
  std::int32_t parts;
  TimelinePart part[kTimelineParts];
  std::uint32_t start_clock;  // the low 32 bits of %clock64 when the CTA began
  std::int32_t ring_tiles;    // tiles through the ring (the wgmma family; 0: no ring)
  std::int32_t mma_events;    // 1: the MMA warps record theirs (landed_* and *_freed)
  std::int32_t ring_stages;   // the ring's stages: tile t reuses tile t − ring_stages's stage
  // The wgmma family's prologue, on the same clock as start_clock: thread 0 knew the CTA's
  // work (its sequence's length read: split launches), and the copy issuer began and ended
  // issuing q's copy for its first part (the copies of the first tile follow).
  std::uint32_t work_known_clock;
  std::uint32_t q_issue_clock;
  std::uint32_t q_issued_clock;
  // A split pair's merge (the 64-head kernel's merge_pair), same clock, as thread 0 sees it:
  // entered (after the last tile and the row sums), the other CTA's statistics landed, this
  // CTA's share of the other's columns sent, the other's share of this CTA's columns landed,
  // the final rows staged, and stored (its own row's bulk copy read).
  std::uint32_t merge_begin_clock;
  std::uint32_t merge_stats_clock;
  std::uint32_t merge_sent_clock;
  std::uint32_t merge_rows_clock;
  std::uint32_t merge_staged_clock;
  std::uint32_t merge_stored_clock;
  TimelineTile tile[kTimelineTiles];
};

// The plan with room for one CtaTimeline per CTA after its workspace (16-byte aligned), and
// the request to fill it. Launching such a plan needs a timeline build (kTimelineBuild): a
// normal build refuses it as a plan that does not match the call.
LaunchPlan with_timeline(LaunchPlan plan, int batch, int num_heads, int d_v);

// Where the records start in the workspace of a plan made by with_timeline.
std::size_t timeline_offset(const LaunchPlan& plan, int batch, int num_heads, int d_v);

}  // namespace mlalab::kernels
