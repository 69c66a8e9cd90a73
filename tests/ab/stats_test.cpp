#include "ab/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace mlalab::ab {
namespace {

constexpr std::array<std::uint32_t, 1> kStream = {7};
constexpr double kInfinity = std::numeric_limits<double>::infinity();

RoundSamples present(const std::vector<double>& values) {
  return RoundSamples(values.begin(), values.end());
}

Settings with_resamples(int resamples) {
  Settings settings;
  settings.resamples = resamples;
  return settings;
}

// ---------------------------------------------------------------------------------------------
// Pairing

TEST(PairRounds, KeepsOnlyRoundsWhereBothArmsHaveASample) {
  const RoundSamples treatment = {1.0, std::nullopt, 3.0, 4.0, 5.0};
  const RoundSamples control = {10.0, 20.0, std::nullopt, 40.0};  // one round shorter
  const PairedRounds paired = pair_rounds(treatment, control, Direction::kHigherIsBetter);
  EXPECT_EQ(paired.treatment, (std::vector<double>{1.0, 4.0}));
  EXPECT_EQ(paired.control, (std::vector<double>{10.0, 40.0}));
  EXPECT_EQ(paired.size(), 2);
}

TEST(PairRounds, TurnsLatenciesIntoThroughputs) {
  const PairedRounds paired =
      pair_rounds(present({2.0, 4.0}), present({8.0, 5.0}), Direction::kLowerIsBetter);
  EXPECT_EQ(paired.treatment, (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(paired.control, (std::vector<double>{0.125, 0.2}));
}

TEST(PairRounds, RejectsSamplesThatAreNotPositiveAndFinite) {
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), kInfinity}) {
    EXPECT_THROW(pair_rounds(present({1.0, bad}), present({1.0, 1.0}), Direction::kHigherIsBetter),
                 std::invalid_argument)
        << bad;
  }
}

TEST(MedianOf, UsesThePresentSamplesOnly) {
  EXPECT_EQ(median_of({3.0, std::nullopt, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median_of({4.0, 1.0, std::nullopt, 2.0, 3.0}), 2.5);
  EXPECT_TRUE(std::isnan(median_of({std::nullopt})));
}

// ---------------------------------------------------------------------------------------------
// The bootstrap distribution

TEST(BootstrapDistribution, QuantilesInterpolateBetweenOrderStatistics) {
  const BootstrapDistribution distribution({5, 1, 4, 2, 3});  // sorted: 1 2 3 4 5
  EXPECT_DOUBLE_EQ(distribution.quantile(0.0), 1);
  EXPECT_DOUBLE_EQ(distribution.quantile(0.25), 2);     // position 1
  EXPECT_DOUBLE_EQ(distribution.quantile(0.1), 1.4);    // position 0.4
  EXPECT_DOUBLE_EQ(distribution.quantile(0.975), 4.9);  // position 3.9
  EXPECT_DOUBLE_EQ(distribution.quantile(1.0), 5);
}

TEST(BootstrapDistribution, PValuesCountTheReplicatesOnTheWrongSide) {
  // Nine replicates from 3 to 11 %: none at or below 2, all at or above −2, three at or below 5.
  const BootstrapDistribution distribution({3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_DOUBLE_EQ(distribution.p_exceeds(2), 1.0 / 10);
  EXPECT_DOUBLE_EQ(distribution.p_exceeds(5), 4.0 / 10);  // 3, 4, 5 and the +1
  EXPECT_DOUBLE_EQ(distribution.p_falls_below(-2), 10.0 / 10);
  EXPECT_DOUBLE_EQ(distribution.p_falls_below(9), 4.0 / 10);  // 9, 10, 11 and the +1
  EXPECT_DOUBLE_EQ(distribution.p_beyond(2), 2.0 / 10);
  EXPECT_DOUBLE_EQ(distribution.p_beyond(5), 8.0 / 10);
  EXPECT_DOUBLE_EQ(distribution.p_beyond(7), 1.0);  // 2 · 6/10, capped

  const BootstrapDistribution mirrored({-11, -10, -9, -8, -7, -6, -5, -4, -3});
  EXPECT_DOUBLE_EQ(mirrored.p_beyond(2), 2.0 / 10);
}

TEST(BootstrapDistribution, EmptyMeansNothingIsKnown) {
  const BootstrapDistribution empty;
  EXPECT_EQ(empty.quantile(0.025), -kInfinity);
  EXPECT_EQ(empty.quantile(0.975), kInfinity);
  EXPECT_EQ(empty.p_beyond(0), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The paired bootstrap

TEST(EstimateChange, PointEstimateIsTheRatioOfMedians) {
  const PairedRounds rounds{.treatment = {110, 130, 120, 500}, .control = {100, 90, 95, 105}};
  const ChangeEstimate estimate = estimate_change(rounds, with_resamples(100), kStream);
  // medians: (120 + 130) / 2 = 125 and (95 + 100) / 2 = 97.5.
  EXPECT_DOUBLE_EQ(estimate.change.change_pct, (125.0 / 97.5 - 1) * 100);
  EXPECT_EQ(estimate.change.paired_rounds, 4);
  EXPECT_EQ(estimate.distribution.size(), 100);
}

// Every round's variant is exactly 1.2 × its baseline, but the rounds themselves swing by ±50 %.
// A paired resample keeps each round's pair, so every replicate is exactly +20 %; resampling
// the arms separately would give an interval dozens of percent wide.
TEST(EstimateChange, PairingCancelsRoundToRoundSwings) {
  PairedRounds rounds;
  for (const double level : {50.0, 140.0, 90.0, 150.0, 60.0, 120.0, 75.0, 100.0, 130.0, 55.0}) {
    rounds.control.push_back(level);
    rounds.treatment.push_back(level * 1.2);
  }
  const ChangeEstimate estimate = estimate_change(rounds, with_resamples(500), kStream);
  EXPECT_NEAR(estimate.change.change_pct, 20, 1e-9);
  EXPECT_NEAR(estimate.change.interval_pct.lower, 20, 1e-9);
  EXPECT_NEAR(estimate.change.interval_pct.upper, 20, 1e-9);
}

TEST(EstimateChange, FewerThanTwoRoundsGiveNoInterval) {
  const ChangeEstimate one =
      estimate_change({.treatment = {2}, .control = {1}}, Settings{}, kStream);
  EXPECT_DOUBLE_EQ(one.change.change_pct, 100);
  EXPECT_EQ(one.change.interval_pct.lower, -kInfinity);
  EXPECT_EQ(one.change.interval_pct.upper, kInfinity);
  EXPECT_EQ(one.distribution.size(), 0);

  const ChangeEstimate none = estimate_change({}, Settings{}, kStream);
  EXPECT_TRUE(std::isnan(none.change.change_pct));
  EXPECT_EQ(none.change.paired_rounds, 0);
}

// The exact bootstrap distribution of a few rounds, by enumerating all n^n equally likely
// resamples, against the sampled one. With B = 2000 the largest gap between the two CDFs
// exceeds 0.05 with probability ≤ 2·exp(−2·B·0.05²) ≈ 1e−4 (Dvoretzky–Kiefer–Wolfowitz), so a
// larger gap means the resampling or the resampled median is wrong, e.g. an arm resampled on
// its own, an off-by-one rank, or a biased index draw.
double largest_cdf_gap(const PairedRounds& rounds, int resamples) {
  const int n = rounds.size();
  auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t m = values.size();
    return (values[(m - 1) / 2] + values[m / 2]) / 2;
  };
  std::vector<double> exact;
  std::vector<int> index(static_cast<std::size_t>(n), 0);
  for (bool more = true; more;) {
    std::vector<double> treatment;
    std::vector<double> control;
    for (const int i : index) {
      treatment.push_back(rounds.treatment[static_cast<std::size_t>(i)]);
      control.push_back(rounds.control[static_cast<std::size_t>(i)]);
    }
    exact.push_back((median(treatment) / median(control) - 1) * 100);
    // The next index tuple, like an odometer in base n.
    more = false;
    for (int& digit : index) {
      if (++digit < n) {
        more = true;
        break;
      }
      digit = 0;
    }
  }
  std::sort(exact.begin(), exact.end());

  const ChangeEstimate sampled = estimate_change(rounds, with_resamples(resamples), kStream);
  double gap = 0;
  for (const double x : exact) {
    const double exact_cdf =
        static_cast<double>(std::upper_bound(exact.begin(), exact.end(), x) - exact.begin()) /
        static_cast<double>(exact.size());
    // p_exceeds(x) = (#{≤ x} + 1) / (B + 1): undo the +1 to get the empirical CDF.
    const double sampled_cdf =
        (sampled.distribution.p_exceeds(x) * (resamples + 1) - 1) / resamples;
    gap = std::max(gap, std::abs(exact_cdf - sampled_cdf));
  }
  return gap;
}

TEST(EstimateChange, MatchesTheExactBootstrapDistribution) {
  constexpr int kResamples = 2000;
  constexpr double kLargestGap = 0.05;
  // Odd and even counts (one and two middle order statistics), and arms in different orders.
  EXPECT_LT(largest_cdf_gap({.treatment = {105, 98, 112}, .control = {100, 103, 97}}, kResamples),
            kLargestGap);
  EXPECT_LT(
      largest_cdf_gap({.treatment = {105, 98, 112, 101, 99}, .control = {100, 103, 97, 110, 95}},
                      kResamples),
      kLargestGap);
  EXPECT_LT(largest_cdf_gap(
                {.treatment = {120, 90, 111, 101, 104, 97}, .control = {100, 103, 97, 99, 95, 108}},
                kResamples),
            kLargestGap);
}

TEST(EstimateChange, SameSeedAndStreamGiveIdenticalResults) {
  PairedRounds rounds;
  std::mt19937_64 generator(1);
  std::normal_distribution<double> noise(100, 5);
  for (int round = 0; round < 25; ++round) {
    rounds.treatment.push_back(noise(generator));
    rounds.control.push_back(noise(generator));
  }
  // The whole distribution, through its percentiles.
  auto percentiles = [](const ChangeEstimate& estimate) {
    std::vector<double> values;
    for (int percent = 0; percent <= 100; ++percent) {
      values.push_back(estimate.distribution.quantile(percent / 100.0));
    }
    return values;
  };
  const Settings settings = with_resamples(300);
  const ChangeEstimate first = estimate_change(rounds, settings, kStream);
  EXPECT_EQ(percentiles(first), percentiles(estimate_change(rounds, settings, kStream)));

  // Another stream or another seed resamples differently. A median's replicates take few
  // distinct values, so one end point may coincide by chance: compare the whole distribution.
  const std::array<std::uint32_t, 1> other_stream = {8};
  Settings other_seed = settings;
  other_seed.seed += 1;
  EXPECT_NE(percentiles(first), percentiles(estimate_change(rounds, settings, other_stream)));
  EXPECT_NE(percentiles(first), percentiles(estimate_change(rounds, other_seed, kStream)));
}

// ---------------------------------------------------------------------------------------------
// Calibration: under no change, how often does the test say "changed"?

struct NullStudy {
  int single_rejections = 0;   // single comparisons with p ≤ α
  int raw_family_errors = 0;   // families where some uncorrected p ≤ α
  int holm_family_errors = 0;  // families where some Holm-adjusted p ≤ α
  int bh_family_errors = 0;    // families where some BH-adjusted p ≤ α
};

// `families` families of `tests` A/A comparisons, each of `rounds` rounds at 6 % noise,
// tested against zero change (no band, no minimum effect: the bare bootstrap test).
NullStudy run_null_study(int families, int tests, int rounds, const Settings& settings) {
  constexpr double kNoiseSigma = 0.06;
  std::mt19937_64 generator(settings.seed);
  std::normal_distribution<double> noise(0, kNoiseSigma);
  NullStudy study;
  for (int family = 0; family < families; ++family) {
    std::vector<double> p_values;
    for (int test = 0; test < tests; ++test) {
      PairedRounds paired;
      for (int round = 0; round < rounds; ++round) {
        paired.treatment.push_back(1 + noise(generator));
        paired.control.push_back(1 + noise(generator));
      }
      const std::array<std::uint32_t, 2> stream = {static_cast<std::uint32_t>(family),
                                                   static_cast<std::uint32_t>(test)};
      p_values.push_back(estimate_change(paired, settings, stream).distribution.p_beyond(0));
    }
    auto any_rejected = [&](const std::vector<double>& p) {
      return std::any_of(p.begin(), p.end(), [&](double value) { return value <= settings.alpha; });
    };
    study.single_rejections += p_values[0] <= settings.alpha;
    study.raw_family_errors += any_rejected(p_values);
    study.holm_family_errors += any_rejected(adjust_p_values(p_values, Correction::kHolm));
    study.bh_family_errors +=
        any_rejected(adjust_p_values(p_values, Correction::kBenjaminiHochberg));
  }
  return study;
}

// 300 families of 9 null points at 20 rounds each. Expected, if the bootstrap p-value is
// calibrated: single tests reject ≈ α = 5 %; a family without correction errs in
// 1 − 0.95^9 ≈ 37 %; with Holm or BH (the same under the complete null) in ≤ 5 %.
// Bounds: Binomial(300, 0.05) has sd 1.3 %. A single test may reject from 2 % to 10 %: the
// percentile bootstrap of a median is somewhat conservative at 20 rounds (≈ 3.5 % measured),
// and anything above 10 % (4 sd over α) would be a broken test. A family without correction
// must err in more than 15 % (three times α), or this study could not tell a working
// correction from none; with a correction, in at most 8 %: α plus 2.3 sd of Binomial(300, α).
TEST(Calibration, BootstrapTestHoldsItsLevelAndTheCorrectionHoldsTheFamilyRate) {
  constexpr int kFamilies = 300;
  constexpr int kPointsPerSweep = 9;
  constexpr int kRounds = 20;
  Settings settings = with_resamples(400);
  settings.seed = 2024;
  const NullStudy study = run_null_study(kFamilies, kPointsPerSweep, kRounds, settings);
  const double single_rate = study.single_rejections / double(kFamilies);
  const double raw_rate = study.raw_family_errors / double(kFamilies);
  const double holm_rate = study.holm_family_errors / double(kFamilies);
  const double bh_rate = study.bh_family_errors / double(kFamilies);
  std::printf(
      "[ stats    ] null calibration over %d families of %d points, %d rounds: single "
      "test %.3f, family uncorrected %.3f, Holm %.3f, BH %.3f (alpha %.2f)\n",
      kFamilies, kPointsPerSweep, kRounds, single_rate, raw_rate, holm_rate, bh_rate,
      settings.alpha);
  EXPECT_GE(single_rate, 0.02);
  EXPECT_LE(single_rate, 0.10);
  EXPECT_GT(raw_rate, 0.15);
  EXPECT_LE(holm_rate, 0.08);
  EXPECT_LE(bh_rate, 0.08);
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
  expect_rejected([](Settings& s) { s.alpha = 0; });
  expect_rejected([](Settings& s) { s.alpha = 1; });
  expect_rejected([](Settings& s) { s.resamples = 0; });
  expect_rejected([](Settings& s) { s.min_rounds = 1; });
  expect_rejected([](Settings& s) { s.max_rounds = s.min_rounds - 1; });
  expect_rejected([](Settings& s) { s.time_budget_s = 0; });
}

TEST(Settings, DefaultResamplesLetHolmRejectAcrossASweep) {
  // B ≥ 2m/α − 1: for 9 points at α = 0.05, 359, where 2 / (B + 1) = α / m exactly.
  EXPECT_EQ(min_resamples_for(9, 0.05), 359);
  EXPECT_GE(Settings{}.resamples, min_resamples_for(50, Settings{}.alpha));
}

TEST(NormalUpperQuantile, MatchesTabulatedValues) {
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959964, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.05), 1.644854, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_upper_quantile(0.975), -1.959964, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.05 / 18), 2.772921, 1e-6);  // Holm's first step, m = 9
  EXPECT_THROW(normal_upper_quantile(0), std::invalid_argument);
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
