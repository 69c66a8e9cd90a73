#pragma once
// change.svg: what an A/B is for, each variant's change against the baseline, in %, against
// concurrency. One panel per analysed variant, stacked, all sharing the concurrency axis of
// throughput.svg and one % scale, so that heights compare across panels. In each panel:
//   - a zero line;
//   - the ±threshold band, max(A/A band, min_effect_pct) of each measured point, shaded as a
//     step around the point (half way to its neighbours), since the threshold differs by point;
//   - at every measured point the estimate with its interval as an error bar, the marker's
//     shape and colour saying the point's verdict (▲ FASTER, ▼ SLOWER, ● WITHIN_NOISE,
//     ◇ AMBIGUOUS); points not measured are absent;
//   - the variant's prediction, when it has one, as a dashed line with its value.
// The sign is the analysis's and report.md's: + is faster (a latency is compared as its
// inverse). An interval reaching more than twice as far as any estimate, threshold or
// prediction runs off the panel, without its cap at that end. Variants without analysis
// (INVALID) are named in the legend, not drawn; a record without analysis gets a picture that
// says there is nothing to plot.
#include <iosfwd>
#include <string>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

class ChangeSvg final : public ReportWriter {
 public:
  std::string file_name() const override { return "change.svg"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
