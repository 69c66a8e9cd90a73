#include "report/record_view.h"

#include <cmath>
#include <algorithm>
#include <numeric>
#include <variant>

namespace mlalab::report {

int arm_index(const ab::RunRecord& record, ab::ArmRole role) {
  for (std::size_t i = 0; i < record.arms.size(); ++i) {
    if (record.arms[i].role == role) return static_cast<int>(i);
  }
  return -1;
}

std::vector<double> arm_values(const ab::RunRecord& record, int point, int arm) {
  std::vector<const ab::Sample*> matching;
  for (const ab::Sample& sample : record.samples) {
    if (sample.point == point && sample.arm == arm && !sample.throttled) {
      matching.push_back(&sample);
    }
  }
  std::stable_sort(matching.begin(), matching.end(),
                   [](const ab::Sample* a, const ab::Sample* b) { return a->round < b->round; });
  std::vector<double> values;
  values.reserve(matching.size());
  for (const ab::Sample* sample : matching) values.push_back(sample->value);
  return values;
}

double arm_median(const ab::RunRecord& record, int point, int arm) {
  const std::vector<double> values = arm_values(record, point, arm);
  return ab::median_of(ab::RoundSamples(values.begin(), values.end()));
}

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return std::nan("");
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0;
  for (const double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / (n - 1)) / mean;
}

ab::Direction metric_direction(const ab::RunRecord& record) {
  if (record.analysis) return record.analysis->direction;
  if (const auto* command = std::get_if<ab::CommandArm>(&record.experiment.baseline.config)) {
    return command->direction;
  }
  return ab::Direction::kHigherIsBetter;
}

std::string metric_unit(const ab::RunRecord& record) {
  return record.experiment.baseline.is_kernel() ? "sequences/s" : "metric";
}

const ab::VariantResult* variant_result(const ab::RunRecord& record, const std::string& name) {
  if (!record.analysis) return nullptr;
  for (const ab::VariantResult& variant : record.analysis->variants) {
    if (variant.name == name) return &variant;
  }
  return nullptr;
}

const ab::PointNoise* point_noise(const ab::RunRecord& record, int concurrency) {
  if (!record.analysis) return nullptr;
  for (const ab::PointNoise& noise : record.analysis->noise) {
    if (noise.concurrency == concurrency) return &noise;
  }
  return nullptr;
}

const ab::PointResult* point_result(const ab::VariantResult& variant, int concurrency) {
  for (const ab::PointResult& point : variant.points) {
    if (point.concurrency == concurrency) return &point;
  }
  return nullptr;
}

double confidence_pct(const ab::RunRecord& record) {
  return 100.0 * (1.0 - record.experiment.stats.alpha);
}

int throttled_count(const ab::RunRecord& record) {
  int count = 0;
  for (const ab::Sample& sample : record.samples) count += sample.throttled ? 1 : 0;
  return count;
}

}  // namespace mlalab::report
