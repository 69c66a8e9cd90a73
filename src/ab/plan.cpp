#include "ab/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ab/runner.h"  // format_duration
#include "ab/verdict.h"

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;
// Without a prediction the plan aims at twice the minimum effect: a change clearly worth
// having, which the threshold alone would need infinitely many rounds to resolve.
constexpr double kDefaultEffectOverThreshold = 2.0;

}  // namespace

std::vector<PointPlan> plan_sweep(const RunRecord& record, const Experiment& experiment) {
  const Settings& settings = experiment.stats;
  const SweepSamples samples = sweep_samples(record);
  const double level = planning_level(
      settings, family_size(settings, static_cast<int>(experiment.sweep.concurrency.size()),
                            static_cast<int>(experiment.variants.size())));
  std::vector<PointPlan> plans;
  for (const PointSamples& point : samples.points) {
    PointPlan plan{.concurrency = point.concurrency,
                   .pilot_rounds = rounds_run(point),
                   .seconds_per_round = 0,
                   .variants = {}};
    for (const PointRecord& measured : record.points) {
      if (measured.concurrency == point.concurrency && measured.rounds > 0) {
        plan.seconds_per_round = measured.elapsed_s / measured.rounds;
      }
    }
    for (const Arm& arm : experiment.variants) {
      VariantPlan variant{.name = arm.name,
                          .expected_effect_pct = arm.prediction_pct.value_or(
                              kDefaultEffectOverThreshold * settings.min_effect_pct),
                          .predicted = arm.prediction_pct.has_value(),
                          .sd_log = std::nullopt,
                          .rounds_needed = std::nullopt,
                          .mde_at_max_rounds_pct = 0};
      const auto found = std::find(samples.variant_names.begin(), samples.variant_names.end(),
                                   arm.name);
      if (found != samples.variant_names.end()) {
        const auto v = static_cast<std::size_t>(found - samples.variant_names.begin());
        const Change change = compare_over_looks(point.variants[v], point.baseline,
                                                 samples.direction, plan.pilot_rounds, settings)
                                  .change;
        if (std::isfinite(change.standard_error_log) && change.standard_error_log > 0) {
          variant.sd_log = change.standard_error_log * std::sqrt(change.paired_rounds);
          // No point is judged before its first look.
          if (const auto rounds = rounds_for_power(*variant.sd_log, variant.expected_effect_pct,
                                                   settings.min_effect_pct, level)) {
            variant.rounds_needed = std::max(*rounds, settings.min_rounds);
          }
          variant.mde_at_max_rounds_pct = minimum_detectable_effect_pct(
              *variant.sd_log, settings.max_rounds, settings.min_effect_pct, level);
        }
      }
      plan.variants.push_back(std::move(variant));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::vector<std::string> plan_lines(const std::vector<PointPlan>& plans,
                                    const Experiment& experiment) {
  const Settings& settings = experiment.stats;
  std::vector<std::string> lines;
  for (const PointPlan& plan : plans) {
    for (const VariantPlan& variant : plan.variants) {
      std::string line = fmt::format("C{} {}: ", plan.concurrency, variant.name);
      if (!variant.sd_log) {
        lines.push_back(line + "no noise measured yet");
        continue;
      }
      // The noise of one round, as the % an interval from one round would span (±1 sd).
      line += fmt::format("noise ±{:.1f} % per round; ", std::expm1(*variant.sd_log) * kPercent);
      const std::string expected =
          fmt::format("the {} {:+.1f} %", variant.predicted ? "predicted" : "assumed",
                      variant.expected_effect_pct);
      if (!variant.rounds_needed) {
        line += fmt::format("{} is not beyond the ±{:g} % threshold: no number of rounds can "
                            "call it FASTER or SLOWER",
                            expected, settings.min_effect_pct);
      } else {
        const int rounds = *variant.rounds_needed;
        line += fmt::format("{} needs ≈ {} rounds", expected, rounds);
        if (plan.seconds_per_round > 0) {
          line += fmt::format(" (≈ {})", format_duration(rounds * plan.seconds_per_round));
        }
        line += rounds <= settings.max_rounds
                    ? fmt::format(", within max_rounds = {}", settings.max_rounds)
                    : fmt::format(", more than max_rounds = {} allows, which detects only "
                                  "changes ≥ {:.1f} %: raise decision.max_rounds to {} (and "
                                  "time_budget_s)",
                                  settings.max_rounds, variant.mde_at_max_rounds_pct, rounds);
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace mlalab::ab
