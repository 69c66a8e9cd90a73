#pragma once
// The small experiment of the A/B lab's CPU tests (runner, worker arms): V4, H = 16, page 64,
// a context small enough that a sample takes a fraction of a millisecond on one core and the
// fp64 reference milliseconds, budgets of seconds; the caller sets the arms.
#include <string>
#include <utility>

#include "ab/experiment.h"

namespace mlalab::ab::testing {

inline constexpr int kSmallContext = 128;

inline Experiment small_cpu_experiment() {
  Experiment experiment;
  experiment.name = "runner-test";
  experiment.hypothesis = "two threads beat one";
  experiment.backend = Backend::kCpu;
  experiment.sweep.layout = Layout::kV4;
  experiment.sweep.heads = 16;
  experiment.sweep.page_size = 64;
  experiment.sweep.concurrency = {1, 2};
  experiment.sweep.context.length = kSmallContext;
  experiment.measure.launches_per_sample = 2;
  experiment.measure.max_minutes = 1.0;
  experiment.measure.throttle_fraction = 0.0;
  experiment.stats.min_rounds = 3;
  experiment.stats.max_rounds = 6;
  experiment.stats.time_budget_s = 10.0;
  return experiment;
}

// An A/A across processes: `arm` here as the baseline, and the same arm in a worker of `build`.
inline void here_and_in_a_worker(Experiment& experiment, KernelArm arm, std::string build) {
  experiment.baseline = Arm{.name = "here", .prediction_pct = std::nullopt, .config = arm};
  arm.build = std::move(build);
  experiment.variants = {Arm{.name = "in a worker", .prediction_pct = 0.0, .config = arm}};
}

}  // namespace mlalab::ab::testing
