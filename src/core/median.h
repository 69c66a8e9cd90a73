#pragma once
// The summary statistic of timings, shared by the benchmark, the A/B lab's statistics and the
// tuner: the median, robust to the occasional slow sample (a clock dip, a context switch) that
// would drag a mean.
#include <algorithm>
#include <stdexcept>
#include <vector>

namespace mlalab {

// Median of the samples (the mean of the middle two for an even count); throws on none.
inline double median(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("median of no samples");
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  if (samples.size() % 2 == 1) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(samples.begin(), middle);
  return (lower + upper) / 2;
}

}  // namespace mlalab
