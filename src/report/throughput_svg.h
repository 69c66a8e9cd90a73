#pragma once
// throughput.svg: the metric against concurrency, one line per arm (the baseline solid, A′
// dashed, each variant in its own colour), with a shaded band per arm: around the baseline its
// A/A noise band, median · (1 ± band %); around each variant its interval against the
// baseline mapped onto the metric, baseline median · (1 + lower %) … (1 + upper %) (inverted
// for a latency). Hand-written SVG 1.1, 800 × 500, no dependencies: one <polyline> per arm
// with samples, a <polygon> per band, axes with ticks and labels, a legend and a title; the
// legend names the points where the A/A check failed (their verdicts are withheld).
// Concurrency is on a log₂ axis when it spans a factor of 4 or more, the metric on a log₁₀
// axis when it spans more than 4 (so that equal changes look equal along the curve).
#include <iosfwd>
#include <string>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

class ThroughputSvg final : public ReportWriter {
 public:
  std::string file_name() const override { return "throughput.svg"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
