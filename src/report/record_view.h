#pragma once
// Questions several printers ask of a RunRecord: which arm plays which role, an arm's samples
// at a sweep point and their median, the analysis's figures for a point or a variant. They
// read the record only.
#include <string>
#include <vector>

#include "ab/run_record.h"

namespace mlalab::report {

// Index into record.arms of the first arm with the role; -1 when there is none.
int arm_index(const ab::RunRecord& record, ab::ArmRole role);

// The values of one arm's non-throttled samples at one point (indices into record.points and
// record.arms), in round order: what the statistics saw.
std::vector<double> arm_values(const ab::RunRecord& record, int point, int arm);

// Their median (the mean of the middle two for an even count), NaN when there are none: the
// figure the analysis reports as a baseline or variant median.
double arm_median(const ab::RunRecord& record, int point, int arm);

// Sample standard deviation over the mean; NaN with fewer than two values.
double coefficient_of_variation(const std::vector<double>& values);

// Which way is better: the analysis's direction, else a command baseline's, else throughput.
ab::Direction metric_direction(const ab::RunRecord& record);

// The metric's unit for labels: "sequences/s" for kernel arms, "metric" for commands (whose
// unit only their metric regex knows).
std::string metric_unit(const ab::RunRecord& record);

// The analysis's result for the variant named `name`; nullptr without analysis or variant.
const ab::VariantResult* variant_result(const ab::RunRecord& record, const std::string& name);

// The analysis's noise at `concurrency`; nullptr without analysis or point.
const ab::PointNoise* point_noise(const ab::RunRecord& record, int concurrency);

// One variant's result at `concurrency`; nullptr when there is none.
const ab::PointResult* point_result(const ab::VariantResult& variant, int concurrency);

// The confidence of the intervals in %: 100 · (1 − α).
double confidence_pct(const ab::RunRecord& record);

// Samples flagged throttled (excluded from the statistics).
int throttled_count(const ab::RunRecord& record);

}  // namespace mlalab::report
