#pragma once
// report.md: the report a person reads. Sections, in order:
//   What was tested    the experiment and its arms (configs, code hashes, validity)
//   Why                the hypothesis
//   How                arms, sweep, rounds per point and the looks with their shares of α,
//                      settings and what each verdict means, the A/A check, the correction
//                      method, environment, throttled samples, stop reason per point, time
//   Baseline           throughput per concurrency with the baseline's coefficient of
//                      variation, the A/A change, interval and band, and the A/A check's
//                      result: the variance characterization
//   Per-variant results  one table per variant: change with its interval, MDE, p, verdict with
//                      what was seen (a small change, what an AMBIGUOUS interval allows and
//                      the rounds in all that would settle it, why a point is WITHHELD),
//                      predicted against measured
//   Monotonicity       dips in the throughput curves beyond the noise, or none
//   Conclusion         every variant's verdict in one paragraph (conclusion_paragraph)
//   How to reproduce   the command line, the commit and the experiment file
// A partial record says so at the top, in bold, with the reason.
#include <iosfwd>
#include <string>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

// One sentence per arm, generated from the data, e.g.
//   "8 warps: REJECTED, slower at every concurrency (−14% at C1 … −3% at C128); predicted
//    +20%."
// MIXED variants name the points of both directions; small changes, ambiguous and withheld
// points are named as such; an INCONCLUSIVE variant says what changes it could not have seen
// (the minimum detectable effect); INVALID arms give their reason. Without analysis it says
// that there is none.
std::string conclusion_paragraph(const ab::RunRecord& record);

class MarkdownReport final : public ReportWriter {
 public:
  std::string file_name() const override { return "report.md"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
