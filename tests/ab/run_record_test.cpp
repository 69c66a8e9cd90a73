// sweep_samples: the statistics' view of a run record.
#include "ab/run_record.h"

#include <gtest/gtest.h>

namespace mlalab::ab {
namespace {

PointRecord point(int concurrency, int rounds) {
  PointRecord record;
  record.concurrency = concurrency;
  record.rounds = rounds;
  return record;
}

ArmRecord arm(std::string name, ArmRole role, Direction direction, bool valid = true) {
  ArmRecord record;
  record.name = std::move(name);
  record.role = role;
  record.arm.name = record.name;
  record.arm.config = CommandArm{.command = "true", .env = {}, .metric_regex = "(x)",
                                 .direction = direction, .timeout_s = 1.0};
  record.valid = valid;
  return record;
}

TEST(SweepSamples, PlacesSamplesByRoundAndLeavesOutThrottledAndInvalidOnes) {
  RunRecord record;
  record.arms = {arm("base", ArmRole::kBaseline, Direction::kLowerIsBetter),
                 arm("base (A′)", ArmRole::kBaselineRepeat, Direction::kLowerIsBetter),
                 arm("bad", ArmRole::kVariant, Direction::kLowerIsBetter, false),
                 arm("good", ArmRole::kVariant, Direction::kLowerIsBetter)};
  record.points = {point(4, 3), point(8, 0)};
  record.samples = {
      Sample{.point = 0, .round = 0, .arm = 0, .value = 10},
      Sample{.point = 0, .round = 0, .arm = 1, .value = 11},
      Sample{.point = 0, .round = 0, .arm = 2, .value = 5},
      Sample{.point = 0, .round = 0, .arm = 3, .value = 9},
      Sample{.point = 0, .round = 2, .arm = 0, .value = 12, .throttled = true},
      Sample{.point = 0, .round = 2, .arm = 3, .value = 8},
  };
  const SweepSamples sweep = sweep_samples(record);
  EXPECT_EQ(sweep.direction, Direction::kLowerIsBetter);
  ASSERT_EQ(sweep.variant_names, (std::vector<std::string>{"good"}));
  ASSERT_EQ(sweep.points.size(), 1u);  // the point without samples is left out
  const PointSamples& samples = sweep.points[0];
  EXPECT_EQ(samples.concurrency, 4);
  ASSERT_EQ(samples.baseline.size(), 3u);  // every round run, even one without samples
  EXPECT_EQ(samples.baseline[0], 10.0);
  EXPECT_FALSE(samples.baseline[1]);
  EXPECT_FALSE(samples.baseline[2]);  // throttled
  EXPECT_EQ(samples.baseline_repeat[0], 11.0);
  ASSERT_EQ(samples.variants.size(), 1u);
  EXPECT_EQ(samples.variants[0][0], 9.0);
  EXPECT_EQ(samples.variants[0][2], 8.0);
}

TEST(SweepSamples, TurnsAVariantOfTheOtherDirectionAround) {
  RunRecord record;
  record.arms = {arm("base", ArmRole::kBaseline, Direction::kHigherIsBetter),
                 arm("base (A′)", ArmRole::kBaselineRepeat, Direction::kHigherIsBetter),
                 arm("latency", ArmRole::kVariant, Direction::kLowerIsBetter)};
  record.points = {point(1, 1)};
  record.samples = {Sample{.point = 0, .round = 0, .arm = 2, .value = 4}};
  const SweepSamples sweep = sweep_samples(record);
  ASSERT_EQ(sweep.points.size(), 1u);
  EXPECT_EQ(sweep.points[0].variants[0][0], 0.25);
}

}  // namespace
}  // namespace mlalab::ab
