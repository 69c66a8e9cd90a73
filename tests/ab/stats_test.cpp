// The statistics of one comparison: paired log ratios, their trimmed mean and its t interval,
// the tests beyond and within the threshold, the looks and their shares of α, planning, and
// the multiplicity corrections. Expected values are computed by hand in the comments.
#include "ab/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace mlalab::ab {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Pairing

TEST(PairedLogRatios, KeepTheRoundsWhereBothArmsHaveASample) {
  const RoundSamples treatment = {2.0, std::nullopt, 3.0, 4.0, 5.0};
  const RoundSamples control = {1.0, 20.0, std::nullopt, 8.0};  // one round shorter
  const auto ratios = paired_log_ratios(treatment, control, Direction::kHigherIsBetter);
  ASSERT_EQ(ratios.size(), 4u);
  EXPECT_DOUBLE_EQ(*ratios[0], std::log(2.0));
  EXPECT_FALSE(ratios[1]);
  EXPECT_FALSE(ratios[2]);
  EXPECT_DOUBLE_EQ(*ratios[3], std::log(0.5));
}

TEST(PairedLogRatios, InvertLatenciesSoThatPlusIsFaster) {
  // 8 µs against 10 µs: 25 % more work per unit time, ln(10 / 8).
  const auto ratios = paired_log_ratios({8.0}, {10.0}, Direction::kLowerIsBetter);
  EXPECT_DOUBLE_EQ(*ratios[0], std::log(10.0 / 8.0));
}

TEST(PairedLogRatios, RejectSamplesThatAreNotPositiveAndFinite) {
  EXPECT_THROW(paired_log_ratios({0.0}, {1.0}, Direction::kHigherIsBetter), std::invalid_argument);
  EXPECT_THROW(paired_log_ratios({1.0}, {-2.0}, Direction::kHigherIsBetter),
               std::invalid_argument);
  EXPECT_THROW(paired_log_ratios({std::nan("")}, {1.0}, Direction::kHigherIsBetter),
               std::invalid_argument);
}

TEST(MedianOf, UsesThePresentSamplesOnly) {
  EXPECT_DOUBLE_EQ(median_of({3.0, std::nullopt, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_TRUE(std::isnan(median_of({std::nullopt})));
}

// ---------------------------------------------------------------------------------------------
// The trimmed mean and its interval

TEST(TrimmedLogChange, TrimsAFifthAtEachEndAndWinsorizesForTheStandardError) {
  // 1 … 10 shuffled: g = ⌊0.2 · 10⌋ = 2 trimmed at each end, so the estimate is the mean of
  // 3 … 8 = 5.5. Winsorized: 3 3 3 4 5 6 7 8 8 8, mean 5.5, squared deviations
  // 3 · 2.5² + 1.5² + 0.5² + 0.5² + 1.5² + 3 · 2.5² = 42.5, variance 42.5 / 9, so
  // SE = √(42.5 / 9) / (0.6 · √10) = 1.145308…, with 10 − 4 − 1 = 5 degrees of freedom.
  const std::vector<double> values = {7, 1, 10, 4, 3, 9, 2, 8, 6, 5};
  const LogChange change = trimmed_log_change(values, 0.2);
  EXPECT_EQ(change.rounds, 10);
  EXPECT_DOUBLE_EQ(change.estimate, 5.5);
  EXPECT_NEAR(change.standard_error, std::sqrt(42.5 / 9) / (0.6 * std::sqrt(10.0)), 1e-12);
  EXPECT_NEAR(change.standard_error, 1.145308, 1e-6);
  EXPECT_EQ(change.degrees_of_freedom, 5);
}

TEST(TrimmedLogChange, WithoutTrimmingIsTheMeanAndItsStandardError) {
  // 1 2 3 4: mean 2.5, sample variance 5 / 3, SE = √(5 / 3) / 2, 3 degrees of freedom.
  const std::vector<double> values = {4, 1, 3, 2};
  const LogChange change = trimmed_log_change(values, 0.0);
  EXPECT_DOUBLE_EQ(change.estimate, 2.5);
  EXPECT_NEAR(change.standard_error, std::sqrt(5.0 / 3) / 2, 1e-12);
  EXPECT_EQ(change.degrees_of_freedom, 3);
}

TEST(TrimmedLogChange, AnOutlierMovesTheMeanButNotTheTrimmedMean) {
  std::vector<double> values = {0.05, 0.04, 0.06, 0.05, 0.05, 0.04, 0.06, 0.05, 0.05, 0.05};
  const double clean = trimmed_log_change(values, 0.2).estimate;
  values[3] = -0.69;  // a halved sample
  EXPECT_NEAR(trimmed_log_change(values, 0.2).estimate, clean, 0.002);
  EXPECT_LT(trimmed_log_change(values, 0.0).estimate, clean - 0.07);
}

TEST(TrimmedLogChange, TooFewValuesGiveNoTest) {
  EXPECT_FALSE(trimmed_log_change(std::vector<double>{}).testable());
  const LogChange one = trimmed_log_change(std::vector<double>{0.1});
  EXPECT_DOUBLE_EQ(one.estimate, 0.1);
  EXPECT_FALSE(one.testable());
  EXPECT_EQ(one.standard_error, kInfinity);
}

TEST(ChangeOf, IsTheEstimateInPercentWithATIntervalMappedBack) {
  // ln(1.05) ± t(0.975, 20) · 0.01, mapped back through exp: an interval around +5 % whose
  // ends are 1.05 · exp(∓0.0208596) − 1.
  const LogChange log_change{.rounds = 25, .estimate = std::log(1.05), .standard_error = 0.01,
                             .degrees_of_freedom = 20};
  const Change change = change_of(log_change, 0.05);
  EXPECT_EQ(change.paired_rounds, 25);
  EXPECT_NEAR(change.change_pct, 5.0, 1e-12);
  const double t = 2.0859634;  // tabulated t(0.975, 20)
  EXPECT_NEAR(change.interval_pct.lower, (1.05 * std::exp(-t * 0.01) - 1) * 100, 1e-5);
  EXPECT_NEAR(change.interval_pct.upper, (1.05 * std::exp(t * 0.01) - 1) * 100, 1e-5);
  EXPECT_EQ(change.degrees_of_freedom, 20);
  // Untestable: the estimate, and an infinite interval.
  const Change untestable = change_of(trimmed_log_change(std::vector<double>{0.1}), 0.05);
  EXPECT_NEAR(untestable.change_pct, (std::exp(0.1) - 1) * 100, 1e-12);
  EXPECT_EQ(untestable.interval_pct.lower, -kInfinity);
}

// ---------------------------------------------------------------------------------------------
// The tests agree with the interval

// An estimate whose 95 % interval ends exactly on +2 %: its test beyond ±2 % sits at p = α.
TEST(PValues, BeyondIsAlphaWhenTheIntervalEndsOnTheThreshold) {
  const int df = 30;
  const double se = 0.01;
  const double t = student_t_upper_quantile(0.025, df);
  const LogChange on_edge{.rounds = 40, .estimate = std::log1p(0.02) + t * se,
                          .standard_error = se, .degrees_of_freedom = df};
  EXPECT_NEAR(p_beyond(on_edge, 2.0), 0.05, 1e-9);
  EXPECT_NEAR(change_of(on_edge, 0.05).interval_pct.lower, 2.0, 1e-9);
  // The mirror image below −2 %.
  LogChange below = on_edge;
  below.estimate = std::log1p(-0.02) - t * se;
  EXPECT_NEAR(p_beyond(below, 2.0), 0.05, 1e-9);
  // Far inside: nothing beyond, and p_within small.
  const LogChange zero{.rounds = 40, .estimate = 0, .standard_error = se,
                       .degrees_of_freedom = df};
  EXPECT_GT(p_beyond(zero, 2.0), 0.99);
  EXPECT_LT(p_within(zero, 2.0), 0.1);
  EXPECT_EQ(p_beyond(trimmed_log_change(std::vector<double>{0.3}), 2.0), 1.0);
}

// An estimate whose 95 % interval's upper end lies exactly on +2 % (lower end inside): the
// equivalence test sits at p = α.
TEST(PValues, WithinIsAlphaWhenTheIntervalTouchesTheThresholdFromInside) {
  const int df = 30;
  const double se = 0.004;
  const double t = student_t_upper_quantile(0.025, df);
  const LogChange touching{.rounds = 40, .estimate = std::log1p(0.02) - t * se,
                           .standard_error = se, .degrees_of_freedom = df};
  EXPECT_NEAR(p_within(touching, 2.0), 0.05, 1e-9);
  EXPECT_NEAR(change_of(touching, 0.05).interval_pct.upper, 2.0, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Looks

TEST(LookSchedule, DoublesFromMinRoundsAndEndsAtMaxRounds) {
  Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = 150;
  EXPECT_EQ(look_round_counts(settings), (std::vector<int>{10, 20, 40, 80, 150}));
  settings.max_rounds = 10;
  EXPECT_EQ(look_round_counts(settings), (std::vector<int>{10}));
  settings.max_rounds = 40;
  EXPECT_EQ(look_round_counts(settings), (std::vector<int>{10, 20, 40}));
}

TEST(LookSchedule, SpendsAlphaTheOBrienFlemingWay) {
  // α(t) = 2 − 2 Φ(1.959964 / √t). At t = 80 / 150: 1.959964 / 0.730297 = 2.683786,
  // 2 · (1 − Φ(2.683786)) = 0.007279, so the last look keeps 1 − 0.007279 / 0.05 = 0.85442.
  // At t = 10 / 150: 1.959964 · √15 = 7.5909: nothing worth naming (≈ 3e-14 of α).
  Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = 150;
  const std::vector<Look> looks = look_schedule(settings);
  ASSERT_EQ(looks.size(), 5u);
  double sum = 0;
  for (const Look& look : looks) sum += look.alpha_share;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_NEAR(looks.back().alpha_share, 0.85442, 1e-4);
  EXPECT_LT(looks.front().alpha_share, 1e-10);
  for (std::size_t j = 1; j < looks.size(); ++j) {
    EXPECT_GT(looks[j].alpha_share, looks[j - 1].alpha_share) << j;
  }
  settings.max_rounds = 10;
  EXPECT_DOUBLE_EQ(look_schedule(settings).front().alpha_share, 1.0);
}

TEST(LookShare, ScheduledLooksKeepTheirsAndAnEarlyEndTakesTheNext) {
  Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = 40;
  const std::vector<Look> looks = look_schedule(settings);
  EXPECT_EQ(look_share(looks, 5), 0.0);
  EXPECT_EQ(look_share(looks, 10), looks[0].alpha_share);
  EXPECT_EQ(look_share(looks, 15), looks[1].alpha_share);
  EXPECT_EQ(look_share(looks, 20), looks[1].alpha_share);
  EXPECT_EQ(look_share(looks, 33), looks[2].alpha_share);
  EXPECT_EQ(look_share(looks, 99), looks[2].alpha_share);
}

TEST(AdjustedOverLooks, IsTheSmallestPOverItsShare) {
  // 0.01 / 0.1 = 0.1, 0.02 / 0.9 = 0.0222…: the second.
  EXPECT_NEAR(adjusted_over_looks(std::vector<double>{0.01, 0.02}, std::vector<double>{0.1, 0.9}),
              0.02 / 0.9, 1e-15);
  // Capped at 1; a look with no share adds nothing.
  EXPECT_EQ(adjusted_over_looks(std::vector<double>{0.5}, std::vector<double>{0.1}), 1.0);
  EXPECT_EQ(adjusted_over_looks(std::vector<double>{0.0}, std::vector<double>{0.0}), 1.0);
}

// ---------------------------------------------------------------------------------------------
// Planning

TEST(Planning, RoundsForPowerAndTheMinimumDetectableEffectAreInverses) {
  // sd 0.085 per paired round (6 % noise on each arm), +5 % against a 2 % threshold, level
  // 0.05: z = 1.959964 + 1.281552 = 3.241516, margin ln 1.05 − ln 1.02 = 0.0289875, so
  // n = (3.241516 · 0.085 / 0.0289875)² = 90.35 → 91 rounds.
  EXPECT_EQ(rounds_for_power(0.085, 5.0, 2.0, 0.05), 91);
  EXPECT_EQ(rounds_for_power(0.085, -5.0, 2.0, 0.05), 91);  // a loss needs as many
  EXPECT_EQ(rounds_for_power(0.085, 1.5, 2.0, 0.05), std::nullopt);
  // 91 rounds detect a little less than 5 %, 90 a little more.
  EXPECT_LT(minimum_detectable_effect_pct(0.085, 91, 2.0, 0.05), 5.0);
  EXPECT_GT(minimum_detectable_effect_pct(0.085, 90, 2.0, 0.05), 5.0);
}

TEST(Planning, TheLevelIsTheLastLooksShareOverTheFamily) {
  Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = 150;
  EXPECT_NEAR(planning_level(settings, 9), 0.05 * 0.85442 / 9, 1e-6);
  EXPECT_NEAR(planning_level(settings, 1), 0.05 * 0.85442, 1e-5);
}

// ---------------------------------------------------------------------------------------------
// Multiplicity corrections against hand-computed values

TEST(AdjustPValues, HolmMatchesHandComputedValues) {
  // Sorted: 0.005 (#3), 0.01 (#0), 0.03 (#2), 0.04 (#1), m = 4.
  //   4 × 0.005 = 0.02; 3 × 0.01 = 0.03; 2 × 0.03 = 0.06; 1 × 0.04 = 0.04 → running max 0.06.
  const std::vector<double> adjusted =
      adjust_p_values(std::vector<double>{0.01, 0.04, 0.03, 0.005}, Correction::kHolm);
  const std::vector<double> expected = {0.03, 0.06, 0.06, 0.02};
  ASSERT_EQ(adjusted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(adjusted[i], expected[i]) << i;
}

TEST(AdjustPValues, BenjaminiHochbergMatchesHandComputedValues) {
  // Sorted as above; from the largest down: 4/4 × 0.04 = 0.04; 4/3 × 0.03 = 0.04;
  // 4/2 × 0.01 = 0.02; 4/1 × 0.005 = 0.02, each capped by the running minimum.
  const std::vector<double> adjusted =
      adjust_p_values(std::vector<double>{0.01, 0.04, 0.03, 0.005}, Correction::kBenjaminiHochberg);
  const std::vector<double> expected = {0.02, 0.04, 0.04, 0.02};
  ASSERT_EQ(adjusted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(adjusted[i], expected[i]) << i;
}

TEST(AdjustPValues, CapsAtOneAndKeepsTheOrderMonotone) {
  // Holm: 3 × 0.2 = 0.6; 2 × 0.5 = 1.0; 1 × 0.9 → running max 1.0.
  // BH:   3/3 × 0.9 = 0.9; 3/2 × 0.5 = 0.75; 3/1 × 0.2 = 0.6.
  const std::vector<double> p = {0.5, 0.2, 0.9};
  const std::vector<double> holm = adjust_p_values(p, Correction::kHolm);
  const std::vector<double> bh = adjust_p_values(p, Correction::kBenjaminiHochberg);
  EXPECT_DOUBLE_EQ(holm[0], 1.0);
  EXPECT_DOUBLE_EQ(holm[1], 0.6);
  EXPECT_DOUBLE_EQ(holm[2], 1.0);
  EXPECT_DOUBLE_EQ(bh[0], 0.75);
  EXPECT_DOUBLE_EQ(bh[1], 0.6);
  EXPECT_DOUBLE_EQ(bh[2], 0.9);
}

TEST(AdjustPValues, TiesAndEdgeCases) {
  // Holm: 2 × 0.01 = 0.02, then 1 × 0.01 under the running max 0.02.
  // BH:   2/2 × 0.01 = 0.01, then 2/1 × 0.01 = 0.02 under the running min 0.01.
  const std::vector<double> tied = {0.01, 0.01};
  EXPECT_EQ(adjust_p_values(tied, Correction::kHolm), (std::vector<double>{0.02, 0.02}));
  EXPECT_EQ(adjust_p_values(tied, Correction::kBenjaminiHochberg),
            (std::vector<double>{0.01, 0.01}));
  EXPECT_EQ(adjust_p_values(std::vector<double>{0.03}, Correction::kHolm),
            (std::vector<double>{0.03}));
  EXPECT_TRUE(adjust_p_values(std::vector<double>{}, Correction::kHolm).empty());
}

// ---------------------------------------------------------------------------------------------
// Settings and small helpers

TEST(Settings, DefaultsAreValidAndEachBadValueIsNamed) {
  EXPECT_NO_THROW(validate(Settings{}));
  auto expect_rejected = [](auto mutate) {
    Settings settings;
    mutate(settings);
    EXPECT_THROW(validate(settings), std::invalid_argument);
  };
  expect_rejected([](Settings& s) { s.min_effect_pct = -1; });
  expect_rejected([](Settings& s) { s.min_effect_pct = 100; });
  expect_rejected([](Settings& s) { s.alpha = 0; });
  expect_rejected([](Settings& s) { s.alpha = 1; });
  expect_rejected([](Settings& s) { s.min_rounds = kMinRounds - 1; });
  expect_rejected([](Settings& s) { s.max_rounds = s.min_rounds - 1; });
  expect_rejected([](Settings& s) { s.time_budget_s = 0; });
}

TEST(Quantiles, MatchTabulatedValues) {
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959964, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.05), 1.644854, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_upper_quantile(0.975), -1.959964, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.05 / 18), 2.772921, 1e-6);  // Holm's first step, m = 9
  EXPECT_THROW(normal_upper_quantile(0), std::invalid_argument);
  EXPECT_NEAR(student_t_upper_quantile(0.025, 5), 2.570582, 1e-6);
  EXPECT_NEAR(student_t_upper_quantile(0.025, 20), 2.085963, 1e-6);
  EXPECT_NEAR(student_t_upper_quantile(0.05, 1), 6.313752, 1e-6);
  EXPECT_THROW(student_t_upper_quantile(0.05, 0), std::invalid_argument);
}

TEST(CorrectionMethodNote, NamesTheMethodTheRateAndTheFamily) {
  Settings settings;
  const std::string holm = correction_method_note(settings);
  EXPECT_NE(holm.find("Holm"), std::string::npos);
  EXPECT_NE(holm.find("family-wise"), std::string::npos);
  EXPECT_NE(holm.find("5 %"), std::string::npos);
  EXPECT_NE(holm.find("each variant"), std::string::npos);

  settings.correction = Correction::kBenjaminiHochberg;
  settings.family = CorrectionFamily::kWholeSweep;
  settings.alpha = 0.1;
  const std::string bh = correction_method_note(settings);
  EXPECT_NE(bh.find("Benjamini-Hochberg"), std::string::npos);
  EXPECT_NE(bh.find("false discovery rate"), std::string::npos);
  EXPECT_NE(bh.find("10 %"), std::string::npos);
  EXPECT_NE(bh.find("every (variant, sweep point)"), std::string::npos);
}

}  // namespace
}  // namespace mlalab::ab
