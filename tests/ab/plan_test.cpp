// Planning: what a point's measured noise lets the expected change need, and how it is said.
#include "ab/plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ab/verdict.h"

namespace mlalab::ab {
namespace {

Arm kernel_arm(std::string name, std::optional<double> prediction) {
  return Arm{.name = std::move(name),
             .prediction_pct = prediction,
             .config = KernelArm{.variant = kCpuVariant, .split = {}, .cpu_threads = 1}};
}

// One point (C8) of 20 rounds: the baseline flat at 1000, A′ and "noisy" at ±12 % around it
// in a fixed pattern, "quiet" at ±0.5 %. "unmeasured" is in the experiment, not the record.
RunRecord pilot_record() {
  RunRecord record;
  record.experiment.stats.min_rounds = 10;
  record.experiment.stats.max_rounds = 60;
  record.experiment.stats.min_effect_pct = 2;
  record.experiment.sweep.concurrency = {8};
  record.experiment.baseline = kernel_arm("baseline", std::nullopt);
  record.experiment.variants = {kernel_arm("noisy", 5.0), kernel_arm("quiet", std::nullopt),
                                kernel_arm("small", 1.0), kernel_arm("unmeasured", 5.0)};
  const std::pair<const char*, ArmRole> arms[] = {{"baseline", ArmRole::kBaseline},
                                                  {"baseline (A′)", ArmRole::kBaselineRepeat},
                                                  {"noisy", ArmRole::kVariant},
                                                  {"quiet", ArmRole::kVariant},
                                                  {"small", ArmRole::kVariant}};
  for (const auto& [name, role] : arms) {
    ArmRecord arm;
    arm.name = name;
    arm.role = role;
    record.arms.push_back(arm);
  }
  constexpr int kRounds = 20;
  PointRecord point;
  point.concurrency = 8;
  point.rounds = kRounds;
  point.elapsed_s = 10.0;
  record.points = {point};
  for (int round = 0; round < kRounds; ++round) {
    const double wiggle = std::sin(2.39996 * round);
    const double values[] = {1000, 1000 * (1 + 0.12 * std::cos(1.7 * round)),
                             1000 * (1 + 0.12 * wiggle), 1000 * (1 + 0.005 * wiggle),
                             1000 * (1 + 0.06 * wiggle)};
    for (int arm = 0; arm < 5; ++arm) {
      record.samples.push_back(
          Sample{.point = 0, .round = round, .order = arm, .arm = arm, .value = values[arm]});
    }
  }
  return record;
}

TEST(PlanSweep, MeasuresEachVariantsNoiseAndTheRoundsItsExpectedChangeNeeds) {
  const RunRecord record = pilot_record();
  const Experiment& experiment = record.experiment;
  const std::vector<PointPlan> plans = plan_sweep(record, experiment);
  ASSERT_EQ(plans.size(), 1u);
  const PointPlan& plan = plans[0];
  EXPECT_EQ(plan.concurrency, 8);
  EXPECT_EQ(plan.pilot_rounds, 20);
  EXPECT_DOUBLE_EQ(plan.seconds_per_round, 0.5);  // 10 s over 20 rounds
  ASSERT_EQ(plan.variants.size(), 4u);

  const double level = planning_level(experiment.stats, 1);
  const VariantPlan& noisy = plan.variants[0];
  EXPECT_TRUE(noisy.predicted);
  EXPECT_EQ(noisy.expected_effect_pct, 5.0);
  ASSERT_TRUE(noisy.sd_log);
  // The noise as the analysis sees it: standard error × √rounds of the comparison.
  const Change change = compare_over_looks(
      sweep_samples(record).points[0].variants[0], sweep_samples(record).points[0].baseline,
      Direction::kHigherIsBetter, 20, experiment.stats).change;
  EXPECT_DOUBLE_EQ(*noisy.sd_log, change.standard_error_log * std::sqrt(20.0));
  EXPECT_GT(*noisy.sd_log, 0.05);  // ±12 % wiggles
  EXPECT_EQ(noisy.rounds_needed, rounds_for_power(*noisy.sd_log, 5.0, 2.0, level));
  EXPECT_GT(*noisy.rounds_needed, 60);
  EXPECT_DOUBLE_EQ(noisy.mde_at_max_rounds_pct,
                   minimum_detectable_effect_pct(*noisy.sd_log, 60, 2.0, level));

  // Without a prediction the plan aims at 2 × the minimum effect.
  const VariantPlan& quiet = plan.variants[1];
  EXPECT_FALSE(quiet.predicted);
  EXPECT_EQ(quiet.expected_effect_pct, 4.0);
  // ±0.5 % noise needs a round or two for +4 %, but nothing is judged before the first look.
  ASSERT_TRUE(quiet.rounds_needed);
  EXPECT_LT(*rounds_for_power(*quiet.sd_log, 4.0, 2.0, level), 10);
  EXPECT_EQ(*quiet.rounds_needed, 10);

  EXPECT_FALSE(plan.variants[2].rounds_needed);  // +1 %: not beyond the 2 % threshold
  EXPECT_FALSE(plan.variants[3].sd_log);         // not measured
}

TEST(PlanLines, SayWhatEachPointNeedsAndWhenTheSettingsCannotDeliverIt) {
  const RunRecord record = pilot_record();
  const std::vector<PointPlan> plans = plan_sweep(record, record.experiment);
  const std::vector<std::string> lines = plan_lines(plans, record.experiment);
  ASSERT_EQ(lines.size(), 4u);
  const int noisy_rounds = *plans[0].variants[0].rounds_needed;
  ASSERT_GT(noisy_rounds, 60) << lines[0];  // 60 rounds cannot resolve +5 % at this noise
  EXPECT_NE(lines[0].find("C8 noisy: noise ±"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("the predicted +5.0 % needs ≈ " + std::to_string(noisy_rounds) +
                          " rounds"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("more than max_rounds = 60 allows"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("raise decision.max_rounds to " + std::to_string(noisy_rounds)),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("the assumed +4.0 % needs"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("within max_rounds = 60"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("is not beyond the ±2 % threshold"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("C8 unmeasured: no noise measured yet"), std::string::npos) << lines[3];
}

}  // namespace
}  // namespace mlalab::ab
