#pragma once
// Planning an experiment: what a sweep point's noise lets it detect, and how many rounds (and
// how much time) the expected change needs, from the same model as the verdicts (stats.h,
// rounds_for_power at the planning level). Printed before a run (`mlalab ab --plan`, from a
// pilot or an earlier run's results.json) and at each point's first look during one, so that
// nobody learns after an hour that 60 rounds could never have resolved a 5 % change.
#include <optional>
#include <string>
#include <vector>

#include "ab/run_record.h"

namespace mlalab::ab {

// What one variant at one point needs.
struct VariantPlan {
  std::string name;
  double expected_effect_pct = 0;  // its prediction, else 2 × min_effect_pct
  bool predicted = false;          // expected_effect_pct is the arm's prediction
  // The standard deviation of one paired round's log ratio as the estimator sees it (standard
  // error × √rounds); nullopt without enough paired rounds to tell.
  std::optional<double> sd_log;
  // For kPlanningPower against the expected effect, at least min_rounds (the first look).
  std::optional<int> rounds_needed;
  double mde_at_max_rounds_pct = 0;   // what max_rounds rounds detect at this noise
};

struct PointPlan {
  int concurrency = 0;
  int pilot_rounds = 0;        // rounds the noise was measured on
  double seconds_per_round = 0;  // from the measured rounds (0 when unknown)
  std::vector<VariantPlan> variants;
};

// The plan of every measured point of a record (a pilot, an earlier run, or the run so far),
// for the settings and predictions of `experiment` (variants matched by name; one the record
// did not measure has no noise).
std::vector<PointPlan> plan_sweep(const RunRecord& record, const Experiment& experiment);

// One line per variant and point, e.g.
//   "C16 8 warps: noise ±8.4 % per round; the expected +5.0 % needs ≈ 126 rounds (≈ 2m10s),
//    more than max_rounds = 60, which detects ≥ 7.9 %"
std::vector<std::string> plan_lines(const std::vector<PointPlan>& plans,
                                    const Experiment& experiment);

}  // namespace mlalab::ab
