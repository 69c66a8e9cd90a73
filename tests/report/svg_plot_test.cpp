#include "report/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "report/synthetic_record.h"

namespace mlalab::report::svg {
namespace {

std::vector<double> values_of(const ValueScale& scale) {
  std::vector<double> values;
  for (const Tick& tick : scale.ticks) values.push_back(tick.value);
  return values;
}

// Linear: (9.7 − 0.3) / 7 ≈ 1.34, so the candidate steps start at 1: step 1 needs the 11 ticks
// 0 … 10, step 2 the 6 ticks 0, 2, … 10, the first at most 7. The domain reaches 4 % of the
// ticks' span (0.4) beyond them.
TEST(NiceScale, LinearTakesTheSmallestStepWithAtMostSevenTicks) {
  const ValueScale scale = nice_scale(0.3, 9.7, false);
  EXPECT_FALSE(scale.log);
  EXPECT_EQ(values_of(scale), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_DOUBLE_EQ(scale.ticks.front().resolution, 2);
  EXPECT_DOUBLE_EQ(scale.lo, -0.4);
  EXPECT_DOUBLE_EQ(scale.hi, 10.4);
}

// −7 … +20: steps 1 (28 ticks) and 2 (−8 … 20, 15 ticks) are too fine, 5 gives −10 … 20, 7.
TEST(NiceScale, LinearAcrossZero) {
  EXPECT_EQ(values_of(nice_scale(-7, 20, false)),
            (std::vector<double>{-10, -5, 0, 5, 10, 15, 20}));
}

// A single value 5 is spread to 4.5 … 5.5 first: step 0.1 gives 11 ticks, 0.2 gives 4.4 … 5.6,
// 7 ticks, labelled to one decimal.
TEST(NiceScale, OneValueGetsRoomAroundIt) {
  const ValueScale scale = nice_scale(5, 5, false);
  ASSERT_EQ(scale.ticks.size(), 7u);
  EXPECT_NEAR(scale.ticks.front().value, 4.4, 1e-12);
  EXPECT_NEAR(scale.ticks.back().value, 5.6, 1e-12);
  EXPECT_DOUBLE_EQ(scale.ticks.front().resolution, 0.2);
}

// Log, 3,000 … 13,500 (4.5×): the 1-2-5 values inside are only 5,000 and 10,000; the scale
// reaches out to the nearest beyond, 2,000 and 20,000, for 4 labels.
TEST(NiceScale, LogReachesOutToTheNearestOneTwoFiveValues) {
  const ValueScale scale = nice_scale(3000, 13500, true);
  EXPECT_TRUE(scale.log);
  EXPECT_EQ(values_of(scale), (std::vector<double>{2000, 5000, 10000, 20000}));
  EXPECT_DOUBLE_EQ(scale.ticks[1].resolution, 1000);  // "5k" needs no decimal
  EXPECT_LT(scale.lo, 2000);
  EXPECT_GT(scale.hi, 20000);
}

// Log, 1.1 … 4.5: 1-2-5 gives 1, 2, 5, three labels; with 3 added, 1, 2, 3, 5.
TEST(NiceScale, LogAddsThreeWhenOneTwoFiveGivesTooFew) {
  EXPECT_EQ(values_of(nice_scale(1.1, 4.5, true)), (std::vector<double>{1, 2, 3, 5}));
}

// Log, 3 … 40,000: 1-2-5 gives 2, 5, 10 … 50,000, fourteen labels; powers of ten give
// 1, 10, … 100,000, six.
TEST(NiceScale, LogFallsBackToPowersOfTen) {
  EXPECT_EQ(values_of(nice_scale(3, 40000, true)),
            (std::vector<double>{1, 10, 100, 1000, 10000, 100000}));
  // 10⁻⁴ … 10⁸: thirteen powers of ten, so every second one: 10⁻⁴, 10⁻², … 10⁸ (seven).
  const std::vector<double> sparse = values_of(nice_scale(1e-4, 1e8, true));
  ASSERT_EQ(sparse.size(), 7u);
  for (std::size_t i = 0; i < sparse.size(); ++i) {
    EXPECT_NEAR(std::log10(sparse[i]), -4.0 + 2.0 * static_cast<double>(i), 1e-9);
  }
}

TEST(NiceScale, NothingToSpanGivesNoTicks) {
  const double infinity = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(nice_scale(infinity, -infinity, false).ticks.empty());
  EXPECT_TRUE(nice_scale(0, 10, true).ticks.empty());
}

// Concurrencies 1 … 64 span 64× (log); one point alone is linear.
TEST(ConcurrencyScale, EverySweepPointAscendingLogFromFourfold) {
  ab::RunRecord record = testing::synthetic_record();
  const ConcurrencyScale scale = concurrency_scale(record);
  EXPECT_EQ(scale.values, (std::vector<int>{1, 4, 16, 64}));
  EXPECT_TRUE(scale.log);
  EXPECT_LT(scale.lo, 1);
  EXPECT_GT(scale.hi, 64);
  record.points.resize(1);
  EXPECT_FALSE(concurrency_scale(record).log);
}

}  // namespace
}  // namespace mlalab::report::svg
