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
};

// ctas = 0 when there are no records. A CTA's end is its last recorded part's, or its start
// when it had none (a balanced worker without a share).
TimelineSummary summarize_timeline(const std::vector<kernels::CtaTimeline>& records);

// "132 CTAs: started within 0.1 µs, ended at 170.8 / 177.8 / 190.1 µs (min / median / max);
// by parts: 1: 26 CTAs, mean 172.9, max 174.3; ...", for the row's line under the table.
std::string timeline_summary_text(const TimelineSummary& summary);

// The rows with a timeline, each with its shape, its CTAs (sm, start and parts in µs from the
// first start) and its summary, for --timeline FILE.
nlohmann::json timeline_json(const std::vector<BenchRow>& rows);

}  // namespace mlalab::bench
