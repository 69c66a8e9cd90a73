#pragma once
// Per-CTA timelines of a decode launch, for `mlalab bench --timeline`: when each CTA started,
// and when it finished each of its parts (a split, or a sequence of a balanced worker's share),
// read from %globaltimer, with the part's sequence, steps and partial-result slot. They show
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
  std::int32_t padding;    // never written
};

// Parts recorded per CTA: the first kTimelineParts; `parts` counts them all, so a CTA with more
// says so (and its recorded end is then its kTimelineParts-th part's).
inline constexpr int kTimelineParts = 15;

struct CtaTimeline {
  std::uint64_t start_ns;  // %globaltimer when the CTA began
  std::uint32_t sm;        // %smid
  std::int32_t parts;
  TimelinePart part[kTimelineParts];
};

// The plan with room for one CtaTimeline per CTA after its workspace (16-byte aligned), and
// the request to fill it. Launching such a plan needs a timeline build (kTimelineBuild): a
// normal build refuses it as a plan that does not match the call.
LaunchPlan with_timeline(LaunchPlan plan, int batch, int num_heads, int d_v);

// Where the records start in the workspace of a plan made by with_timeline.
std::size_t timeline_offset(const LaunchPlan& plan, int batch, int num_heads, int d_v);

}  // namespace mlalab::kernels
