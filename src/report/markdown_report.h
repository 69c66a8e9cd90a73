#pragma once
// report.md: the report a person reads. Sections, in order:
//   What was tested    the experiment and its arms (configs, code hashes, validity)
//   Why                the hypothesis
//   How                arms, sweep, rounds per point, settings with the correction method,
//                      environment, throttled samples, stop reason per point, time taken
//   Baseline           throughput per concurrency with the A/A band and the baseline's
//                      coefficient of variation: the variance characterization
//   Per-variant results  one table per variant: change with its interval, band, verdict,
//                      predicted against measured; the rounds an AMBIGUOUS point needs
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
// MIXED variants name the points of both directions; INVALID arms give their reason. Without
// analysis it says that there is none.
std::string conclusion_paragraph(const ab::RunRecord& record);

class MarkdownReport final : public ReportWriter {
 public:
  std::string file_name() const override { return "report.md"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
