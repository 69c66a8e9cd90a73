#pragma once
// change.svg: what an A/B is for, each variant's change against the baseline, in %, against
// concurrency. One panel per analysed variant, stacked, all sharing the concurrency axis of
// throughput.svg and one % scale, so that heights compare across panels. In each panel:
//   - a zero line;
//   - the ±threshold band, ±min_effect_pct, the same at every point: one band across;
//   - at every measured point the estimate with its interval as an error bar, the marker's
//     shape and colour saying the point's verdict (▲ FASTER, ▼ SLOWER, ● WITHIN_NOISE,
//     ■ SMALL_CHANGE, ◇ AMBIGUOUS, ✕ WITHHELD); points not measured are absent;
//   - the variant's prediction, when it has one, as a dashed line with its value.
// The sign is the analysis's and report.md's: + is faster (a latency is compared as its
// inverse). An interval reaching more than twice as far as the threshold and any estimate or
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
