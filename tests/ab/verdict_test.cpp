// Verdicts: a point's from its evidence, a variant's from its points, the whole analysis on
// hand-made sweeps, dips, the stopping rule, and simulations of whole sweeps measured exactly
// as the runner measures them (a round of every arm in a shuffled order, the rule asked after
// every round), against the targets of issue 8.
#include "ab/verdict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "ab/runner.h"  // shuffled: the runner's own order of the arms in a round

namespace mlalab::ab {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Hand-made data: deterministic per-round wiggles, no random generator

// `rounds` samples of `level` · (1 + wiggle), the wiggle a fixed pattern of amplitude
// `spread` (a fraction) that differs between arms through `phase`.
RoundSamples wiggled(double level, double spread, int rounds, double phase) {
  constexpr double kStep = 2.39996;  // the golden angle in radians: never repeats a phase
  RoundSamples samples;
  for (int round = 0; round < rounds; ++round) {
    samples.push_back(level * (1 + spread * std::sin(kStep * round + phase)));
  }
  return samples;
}

constexpr double kLevel = 1000;  // tokens/s, any value: only ratios matter
constexpr double kQuiet = 0.01;  // ±1 % wiggle
constexpr int kHandRounds = 20;

// One point: A, A′ and the variants at the given throughput ratios to the baseline.
PointSamples hand_point(int concurrency, std::vector<double> variant_ratios, double spread = kQuiet,
                        int rounds = kHandRounds) {
  PointSamples point{.concurrency = concurrency,
                     .baseline = wiggled(kLevel, spread, rounds, 0.0),
                     .baseline_repeat = wiggled(kLevel, spread, rounds, 1.0),
                     .variants = {}};
  for (std::size_t v = 0; v < variant_ratios.size(); ++v) {
    point.variants.push_back(
        wiggled(kLevel * variant_ratios[v], spread, rounds, 2.0 + static_cast<double>(v)));
  }
  return point;
}

// Hand-made points run 20 rounds: the looks are after 10 and 20 (the last).
Settings hand_settings() {
  Settings settings;
  settings.max_rounds = kHandRounds;
  return settings;
}

// ---------------------------------------------------------------------------------------------
// Point verdicts from hand-made evidence

// Evidence at 40 paired rounds with a standard error of 0.01 on the log scale.
PointEvidence evidence(double change_pct, double p_adjusted, double p_within,
                       int rounds = 40) {
  const LogChange log_change{.rounds = rounds,
                             .estimate = std::log1p(change_pct / 100),
                             .standard_error = 0.01,
                             .degrees_of_freedom = rounds - 2 * (rounds / 5) - 1};
  return PointEvidence{.change = change_of(log_change, 0.05),
                       .threshold_pct = 2,
                       .p_value = p_adjusted,
                       .p_adjusted = p_adjusted,
                       .p_within = p_within,
                       .looks = 3,
                       .mde_pct = kInfinity};
}

constexpr double kLevelOfNine = 0.05 / 9;

TEST(JudgePoint, FasterAndSlowerNeedTheCorrectedTestBeyondTheThreshold) {
  const Settings settings;
  const auto faster = judge_point(evidence(10, 0.001, 1), false, settings, kLevelOfNine);
  EXPECT_EQ(faster.verdict, PointVerdict::kFaster);
  EXPECT_FALSE(faster.rounds_to_settle);
  EXPECT_EQ(judge_point(evidence(-10, 0.001, 1), false, settings, kLevelOfNine).verdict,
            PointVerdict::kSlower);
  // The same change, its test not surviving the correction: AMBIGUOUS.
  EXPECT_EQ(judge_point(evidence(10, 0.06, 1), false, settings, kLevelOfNine).verdict,
            PointVerdict::kAmbiguous);
}

// Within ±T: WITHIN_NOISE only when the interval contains 0; a real change smaller than what
// matters is a SMALL_CHANGE, never "within noise".
TEST(JudgePoint, WithinTheThresholdIsWithinNoiseOnlyWhenTheIntervalContainsZero) {
  const Settings settings;
  // ±1.96 % around +0.5 %: contains 0.
  EXPECT_EQ(judge_point(evidence(0.5, 1, 0.001), false, settings, kLevelOfNine).verdict,
            PointVerdict::kWithinNoise);
  // −1 % with an interval of [−1.5, −0.3]: excludes 0.
  PointEvidence small = evidence(-1.0, 1, 0.001);
  small.change.interval_pct = {.lower = -1.5, .upper = -0.3};
  EXPECT_EQ(judge_point(small, false, settings, kLevelOfNine).verdict,
            PointVerdict::kSmallChange);
}

TEST(JudgePoint, WithheldWhenTheAaCheckFailedWhateverTheEvidence) {
  EXPECT_EQ(judge_point(evidence(10, 0.001, 1), true, Settings{}, kLevelOfNine).verdict,
            PointVerdict::kWithheld);
}

// AMBIGUOUS says how many rounds in all would settle it, from the planning model at the
// point's noise: sd = 0.01 · √40 = 0.0632456 per round.
//   +4 %, beyond the threshold: margin ln 1.04 − ln 1.02 = 0.0194180, level α/9: z =
//   2.772921 + 1.281552 = 4.054473, n = (4.054473 · 0.0632456 / 0.0194180)² = 174.4 → 175;
//   +1 %, inside: margin ln 1.02 − ln 1.01 = 0.0098523, level α · w_last (max_rounds 150:
//   w_last = 0.854415): z(0.0213604) = 2.026430 + 1.281552 = 3.307982,
//   n = (3.307982 · 0.0632456 / 0.0098523)² = 450.93 → 451.
TEST(JudgePoint, AmbiguousSaysTheRoundsThatWouldSettleIt) {
  const Settings settings;
  const auto beyond = judge_point(evidence(4, 0.2, 1), false, settings, kLevelOfNine);
  EXPECT_EQ(beyond.verdict, PointVerdict::kAmbiguous);
  ASSERT_TRUE(beyond.rounds_to_settle);
  EXPECT_EQ(*beyond.rounds_to_settle, 175);
  const auto inside = judge_point(evidence(1, 1, 0.3), false, settings, kLevelOfNine);
  EXPECT_EQ(inside.verdict, PointVerdict::kAmbiguous);
  ASSERT_TRUE(inside.rounds_to_settle);
  EXPECT_EQ(*inside.rounds_to_settle, 451);
  // On the threshold no number of rounds is expected to settle it.
  EXPECT_FALSE(judge_point(evidence(2, 1, 1), false, settings, kLevelOfNine).rounds_to_settle);
}

TEST(JudgePoint, TooFewRoundsAreAmbiguousUntilMinRounds) {
  Settings settings;
  settings.min_rounds = 10;
  const auto judgement = judge_point(evidence(50, 0.001, 1, 6), false, settings, kLevelOfNine);
  EXPECT_EQ(judgement.verdict, PointVerdict::kAmbiguous);
  EXPECT_EQ(judgement.rounds_to_settle, 10);
}

// ---------------------------------------------------------------------------------------------
// Variant verdicts

PointResult point_with(int concurrency, PointVerdict verdict) {
  return PointResult{.concurrency = concurrency,
                     .evidence = {},
                     .judgement = {.verdict = verdict, .rounds_to_settle = std::nullopt},
                     .variant_median = kLevel};
}

TEST(SummarizeVariant, EachVerdictAndItsPrecedence) {
  using enum PointVerdict;
  const auto accepted = summarize_variant(
      "v", {point_with(4, kFaster), point_with(1, kWithinNoise), point_with(2, kAmbiguous)});
  EXPECT_EQ(accepted.verdict, VariantVerdict::kAccepted);
  EXPECT_EQ(accepted.faster_at, (std::vector<int>{4}));
  EXPECT_EQ(accepted.points.front().concurrency, 1);  // sorted by concurrency

  EXPECT_EQ(summarize_variant("v", {point_with(1, kSlower), point_with(2, kWithinNoise)}).verdict,
            VariantVerdict::kRejected);
  // Small changes and withheld points decide nothing.
  EXPECT_EQ(summarize_variant("v", {point_with(1, kSmallChange), point_with(2, kWithheld),
                                    point_with(4, kAmbiguous)})
                .verdict,
            VariantVerdict::kInconclusive);
  EXPECT_EQ(summarize_variant("v", {}).verdict, VariantVerdict::kInconclusive);

  // Faster at small batches, slower at large ones: MIXED, not REJECTED, with both lists.
  const auto mixed = summarize_variant("v", {point_with(64, kSlower), point_with(1, kFaster),
                                             point_with(2, kFaster), point_with(32, kSlower)});
  EXPECT_EQ(mixed.verdict, VariantVerdict::kMixed);
  EXPECT_EQ(mixed.faster_at, (std::vector<int>{1, 2}));
  EXPECT_EQ(mixed.slower_at, (std::vector<int>{32, 64}));
}

TEST(VerdictNames, AreTheReportsWords) {
  EXPECT_EQ(to_string(PointVerdict::kWithinNoise), "WITHIN_NOISE");
  EXPECT_EQ(to_string(PointVerdict::kSmallChange), "SMALL_CHANGE");
  EXPECT_EQ(to_string(PointVerdict::kWithheld), "WITHHELD");
  EXPECT_EQ(to_string(PointVerdict::kAmbiguous), "AMBIGUOUS");
  EXPECT_EQ(to_string(VariantVerdict::kMixed), "MIXED");
  EXPECT_EQ(to_string(StopReason::kSettled), "settled");
  EXPECT_EQ(to_string(StopReason::kAaCheckFailed), "A/A check failed");
}

// ---------------------------------------------------------------------------------------------
// The whole analysis on hand-made sweeps

// Four variants over three points, ±1 % wiggle, 20 rounds:
//   "win"    +20 % everywhere                     → ACCEPTED
//   "lose"   −20 % at 4, unchanged elsewhere      → REJECTED
//   "split"  +20 % at 1 and 2, −20 % at 4         → MIXED
//   "same"   unchanged                            → INCONCLUSIVE, no change seen anywhere
TEST(AnalyzeSweep, HandMadeSweepGetsEachVariantVerdict) {
  SweepSamples sweep{
      .direction = Direction::kHigherIsBetter,
      .variant_names = {"win", "lose", "split", "same"},
      .points = {hand_point(4, {1.2, 0.8, 0.8, 1.0}), hand_point(1, {1.2, 1.0, 1.2, 1.0}),
                 hand_point(2, {1.2, 1.0, 1.2, 1.0})}};
  const Settings settings = hand_settings();
  const SweepResult result = analyze_sweep(sweep, settings);

  ASSERT_EQ(result.noise.size(), 3u);
  EXPECT_EQ(result.noise[0].concurrency, 1);  // ascending, whatever the input order
  EXPECT_EQ(result.noise[2].concurrency, 4);
  for (const PointNoise& noise : result.noise) {
    EXPECT_GT(noise.band_pct, 0);
    EXPECT_LT(noise.band_pct, 2);
    EXPECT_DOUBLE_EQ(noise.band_pct, std::max(std::abs(noise.a_a.interval_pct.lower),
                                              std::abs(noise.a_a.interval_pct.upper)));
    EXPECT_FALSE(noise.flagged);
  }
  ASSERT_EQ(result.looks.size(), 2u);
  EXPECT_EQ(result.looks[1].rounds, kHandRounds);

  ASSERT_EQ(result.variants.size(), 4u);
  const VariantResult& win = result.variants[0];
  EXPECT_EQ(win.name, "win");
  EXPECT_EQ(win.verdict, VariantVerdict::kAccepted);
  EXPECT_EQ(win.faster_at, (std::vector<int>{1, 2, 4}));
  for (const PointResult& point : win.points) {
    EXPECT_NEAR(point.evidence.change.change_pct, 20, 1);
    EXPECT_TRUE(point.evidence.change.interval_pct.contains(point.evidence.change.change_pct));
    EXPECT_EQ(point.evidence.threshold_pct, 2.0);
    EXPECT_EQ(point.evidence.looks, 2);
    EXPECT_LE(point.evidence.p_value, point.evidence.p_adjusted);
  }

  const VariantResult& lose = result.variants[1];
  EXPECT_EQ(lose.verdict, VariantVerdict::kRejected);
  EXPECT_EQ(lose.slower_at, (std::vector<int>{4}));

  const VariantResult& split = result.variants[2];
  EXPECT_EQ(split.verdict, VariantVerdict::kMixed);
  EXPECT_EQ(split.faster_at, (std::vector<int>{1, 2}));
  EXPECT_EQ(split.slower_at, (std::vector<int>{4}));

  const VariantResult& same = result.variants[3];
  EXPECT_EQ(same.verdict, VariantVerdict::kInconclusive);
  for (const PointResult& point : same.points) {
    EXPECT_TRUE(point.judgement.verdict == PointVerdict::kWithinNoise ||
                point.judgement.verdict == PointVerdict::kSmallChange)
        << to_string(point.judgement.verdict);
    EXPECT_LT(std::abs(point.evidence.change.change_pct), 1);
  }
  EXPECT_EQ(result.correction_note, correction_method_note(settings));
}

// The p-value over the looks is min over the looks of p / share, each p from the rounds up
// to its look: recomputed here by hand from the first 10 and all 20 rounds.
TEST(AnalyzeSweep, PValuesAreAdjustedForTheLooks) {
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"v"},
                           .points = {hand_point(1, {1.04}, 0.03)}};
  const Settings settings = hand_settings();
  const SweepResult result = analyze_sweep(sweep, settings);
  const auto ratios =
      paired_log_ratios(sweep.points[0].variants[0], sweep.points[0].baseline, sweep.direction);
  std::vector<double> first, all;
  for (std::size_t r = 0; r < ratios.size(); ++r) {
    if (r < 10) first.push_back(*ratios[r]);
    all.push_back(*ratios[r]);
  }
  const std::vector<Look> looks = look_schedule(settings);
  const double by_hand =
      std::min({1.0, p_beyond(trimmed_log_change(first), 2) / looks[0].alpha_share,
                p_beyond(trimmed_log_change(all), 2) / looks[1].alpha_share});
  const PointEvidence& evidence = result.variants[0].points[0].evidence;
  EXPECT_DOUBLE_EQ(evidence.p_value, by_hand);
  EXPECT_DOUBLE_EQ(evidence.change.change_pct, change_of(trimmed_log_change(all), 0.05).change_pct);
  // The minimum detectable effect at the point's noise and rounds, at the planning level of a
  // one-point family.
  EXPECT_DOUBLE_EQ(evidence.mde_pct,
                   minimum_detectable_effect_pct(
                       evidence.change.standard_error_log * std::sqrt(20.0), 20, 2,
                       planning_level(settings, 1)));
}

// A′ runs 5 % above A in every round (an order effect the interleaving did not remove): the
// A/A check fails, and the point's verdicts are withheld, even for a variant that is 20 %
// faster.
TEST(AnalyzeSweep, AFailedAaCheckWithholdsThePointsVerdicts) {
  constexpr double kOrderEffect = 1.05;
  PointSamples point = hand_point(1, {1.2});
  for (auto& sample : point.baseline_repeat) *sample *= kOrderEffect;
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"v"},
                           .points = {point, hand_point(2, {1.2})}};
  const SweepResult result = analyze_sweep(sweep, hand_settings());
  EXPECT_TRUE(result.noise[0].flagged);
  EXPECT_LT(result.noise[0].p_check, 0.05);
  EXPECT_FALSE(result.noise[1].flagged);
  EXPECT_EQ(result.variants[0].points[0].judgement.verdict, PointVerdict::kWithheld);
  EXPECT_EQ(result.variants[0].points[1].judgement.verdict, PointVerdict::kFaster);
  EXPECT_EQ(result.variants[0].faster_at, (std::vector<int>{2}));
}

// +1 % at ±0.3 % wiggles: a real change (the interval excludes 0), inside the 2 % that
// matters: SMALL_CHANGE, not WITHIN_NOISE.
TEST(AnalyzeSweep, ARealChangeBelowTheThresholdIsASmallChange) {
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"v"},
                           .points = {hand_point(1, {1.01}, 0.003)}};
  const SweepResult result = analyze_sweep(sweep, hand_settings());
  const PointResult& point = result.variants[0].points[0];
  EXPECT_GT(point.evidence.change.interval_pct.lower, 0);
  EXPECT_LT(point.evidence.change.interval_pct.upper, 2);
  EXPECT_EQ(point.judgement.verdict, PointVerdict::kSmallChange);
  EXPECT_EQ(result.variants[0].verdict, VariantVerdict::kInconclusive);
}

// +3 % at ±5 % wiggles over 12 rounds: the interval straddles the 2 % minimum effect.
TEST(AnalyzeSweep, NoisyShortPointIsAmbiguousAndSaysHowManyRounds) {
  constexpr double kNoisy = 0.05;
  constexpr int kFewRounds = 12;
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"v"},
                           .points = {hand_point(1, {1.03}, kNoisy, kFewRounds)}};
  const SweepResult result = analyze_sweep(sweep, hand_settings());
  const PointResult& point = result.variants[0].points[0];
  EXPECT_EQ(point.judgement.verdict, PointVerdict::kAmbiguous);
  ASSERT_TRUE(point.judgement.rounds_to_settle);
  EXPECT_GT(*point.judgement.rounds_to_settle, kFewRounds);
  EXPECT_EQ(result.variants[0].verdict, VariantVerdict::kInconclusive);
}

// A latency sweep: the variant takes 0.8× the time, i.e. does 1 / 0.8 = 1.25× the work.
TEST(AnalyzeSweep, LatenciesAreJudgedAsSpeed) {
  const SweepSamples sweep{.direction = Direction::kLowerIsBetter,
                           .variant_names = {"quicker"},
                           .points = {hand_point(1, {0.8})}};
  const SweepResult result = analyze_sweep(sweep, hand_settings());
  EXPECT_EQ(result.variants[0].verdict, VariantVerdict::kAccepted);
  EXPECT_NEAR(result.variants[0].points[0].evidence.change.change_pct, 25, 1);
  EXPECT_NEAR(result.variants[0].points[0].variant_median, 0.8 * kLevel, 0.01 * kLevel);
}

// Discarded samples: the variant's one wild round is paired with a missing baseline sample, so
// it must not reach the comparison; the baseline's missing round shortens the pairs by one.
TEST(AnalyzeSweep, RoundsWithAMissingSideAreDropped) {
  constexpr std::size_t kThrottledRound = 5;
  constexpr double kWild = 50;  // ×50: would drag the estimate if it were paired
  PointSamples point = hand_point(1, {1.0});
  point.baseline[kThrottledRound] = std::nullopt;
  point.variants[0][kThrottledRound] = *point.variants[0][kThrottledRound] * kWild;
  // More wild rounds where the baseline has no sample at all: past its last round.
  for (int extra = 0; extra < kHandRounds; ++extra) point.variants[0].push_back(kLevel * kWild);
  const SweepSamples sweep{
      .direction = Direction::kHigherIsBetter, .variant_names = {"v"}, .points = {point}};
  Settings settings = hand_settings();
  settings.max_rounds = 2 * kHandRounds;  // the variant ran 40 rounds
  const SweepResult result = analyze_sweep(sweep, settings);
  const PointResult& judged = result.variants[0].points[0];
  EXPECT_EQ(judged.evidence.change.paired_rounds, kHandRounds - 1);
  EXPECT_EQ(result.noise[0].a_a.paired_rounds, kHandRounds - 1);
  EXPECT_LT(std::abs(judged.evidence.change.change_pct), 2);
}

TEST(AnalyzeSweep, WholeSweepFamilyAdjustsAcrossVariants) {
  // Two identical variants, one point. Per variant the family has one test (p unchanged);
  // over the whole sweep it has two, so Holm doubles the smaller p.
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"a", "b"},
                           .points = {hand_point(1, {1.05, 1.05}, 0.03, kHandRounds)}};
  Settings settings = hand_settings();
  const SweepResult each = analyze_sweep(sweep, settings);
  settings.family = CorrectionFamily::kWholeSweep;
  const SweepResult whole = analyze_sweep(sweep, settings);
  const PointEvidence& a_each = each.variants[0].points[0].evidence;
  const PointEvidence& b_each = each.variants[1].points[0].evidence;
  EXPECT_EQ(a_each.p_adjusted, a_each.p_value);
  const double smaller = std::min(a_each.p_value, b_each.p_value);
  EXPECT_DOUBLE_EQ(std::min(whole.variants[0].points[0].evidence.p_adjusted,
                            whole.variants[1].points[0].evidence.p_adjusted),
                   std::min(1.0, 2 * smaller));
}

TEST(AnalyzeSweep, RejectsMalformedInput) {
  const Settings settings = hand_settings();
  SweepSamples duplicate{.direction = Direction::kHigherIsBetter,
                         .variant_names = {"v"},
                         .points = {hand_point(1, {1.0}), hand_point(1, {1.0})}};
  EXPECT_THROW(analyze_sweep(duplicate, settings), std::invalid_argument);

  SweepSamples unnamed{.direction = Direction::kHigherIsBetter,
                       .variant_names = {},
                       .points = {hand_point(1, {1.0})}};
  EXPECT_THROW(analyze_sweep(unnamed, settings), std::invalid_argument);

  SweepSamples negative{.direction = Direction::kHigherIsBetter,
                        .variant_names = {"v"},
                        .points = {hand_point(1, {1.0})}};
  negative.points[0].baseline_repeat[3] = -1.0;
  EXPECT_THROW(analyze_sweep(negative, settings), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Monotonicity

TEST(FindDips, FlagsOnlyDropsBeyondTheLargerBand) {
  const ArmCurve curve{.arm = "v",
                       .points = {{.concurrency = 8, .median_throughput = 760, .band_pct = 1},
                                  {.concurrency = 1, .median_throughput = 500, .band_pct = 1},
                                  {.concurrency = 2, .median_throughput = 900, .band_pct = 1},
                                  {.concurrency = 4, .median_throughput = 800, .band_pct = 12},
                                  {.concurrency = 16, .median_throughput = 752, .band_pct = 1}}};
  // Sorted: 1 → 2 rises; 2 → 4 falls 11.1 % and 4 → 8 falls 5 %, both inside the 12 % band
  // at 4; 8 → 16 falls 1.05 %, beyond the 1 % band at both ends: flagged.
  const std::vector<Dip> dips = find_dips({curve});
  ASSERT_EQ(dips.size(), 1u);
  EXPECT_EQ(dips[0].arm, "v");
  EXPECT_EQ(dips[0].from_concurrency, 8);
  EXPECT_EQ(dips[0].to_concurrency, 16);
  EXPECT_NEAR(dips[0].dip_pct, (1 - 752.0 / 760.0) * 100, 1e-12);
  EXPECT_EQ(dips[0].band_pct, 1);
}

TEST(FindDips, ChecksEveryArmAndTheBandAtBothEnds) {
  const ArmCurve flat{.arm = "flat",
                      .points = {{.concurrency = 1, .median_throughput = 100, .band_pct = 2},
                                 {.concurrency = 2, .median_throughput = 99, .band_pct = 2}}};
  // A 5 % drop: beyond the 3 % band at 2, not beyond the 6 % band at 4.
  const ArmCurve dipping{.arm = "dipping",
                         .points = {{.concurrency = 1, .median_throughput = 100, .band_pct = 1},
                                    {.concurrency = 2, .median_throughput = 100, .band_pct = 3},
                                    {.concurrency = 4, .median_throughput = 95, .band_pct = 6},
                                    {.concurrency = 8, .median_throughput = 80, .band_pct = 6}}};
  const std::vector<Dip> dips = find_dips({flat, dipping});
  ASSERT_EQ(dips.size(), 1u);
  EXPECT_EQ(dips[0].arm, "dipping");
  EXPECT_EQ(dips[0].from_concurrency, 4);
  EXPECT_EQ(dips[0].to_concurrency, 8);
  EXPECT_NEAR(dips[0].dip_pct, 100 * 15.0 / 95.0, 1e-12);
}

TEST(FindDips, RejectsRepeatedConcurrencyAndNonPositiveThroughput) {
  const ArmCurve repeated{.arm = "v",
                          .points = {{.concurrency = 1, .median_throughput = 1, .band_pct = 1},
                                     {.concurrency = 1, .median_throughput = 2, .band_pct = 1}}};
  EXPECT_THROW(find_dips({repeated}), std::invalid_argument);
  const ArmCurve zero{.arm = "v",
                      .points = {{.concurrency = 1, .median_throughput = 0, .band_pct = 1}}};
  EXPECT_THROW(find_dips({zero}), std::invalid_argument);
}

TEST(ThroughputCurves, ComeFromTheAnalysisAndFeedFindDips) {
  // The baseline rises 1 : 2 : 3 over concurrency 1, 2, 4; the variant follows it to 2, then
  // runs at half the baseline at 4: 1.5 after 2, a 25 % dip.
  SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                     .variant_names = {"v"},
                     .points = {hand_point(1, {1.0}), hand_point(2, {1.0}), hand_point(4, {0.5})}};
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    const double scale = static_cast<double>(i + 1);  // the baseline rises with concurrency
    for (auto* arm : {&sweep.points[i].baseline, &sweep.points[i].baseline_repeat,
                      &sweep.points[i].variants[0]}) {
      for (auto& sample : *arm) *sample *= scale;
    }
  }
  const SweepResult result = analyze_sweep(sweep, hand_settings());
  const std::vector<ArmCurve> curves = throughput_curves(result);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].arm, "baseline");
  EXPECT_EQ(curves[1].points[2].band_pct, result.noise[2].band_pct);
  const std::vector<Dip> dips = find_dips(curves);
  ASSERT_EQ(dips.size(), 1u);
  EXPECT_EQ(dips[0].arm, "v");
  EXPECT_EQ(dips[0].from_concurrency, 2);
  EXPECT_NEAR(dips[0].dip_pct, 25, 1);

  sweep.direction = Direction::kLowerIsBetter;
  EXPECT_THROW(throughput_curves(analyze_sweep(sweep, hand_settings())), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Stopping

SequentialComparison comparison_with(double p_beyond, double p_within) {
  return SequentialComparison{.change = {}, .looks = 2, .p_beyond = p_beyond,
                              .p_within = p_within};
}

// A state at a look, with the A/A comparison and two variants.
PointState look_state(int rounds, SequentialComparison a_a, SequentialComparison first,
                      SequentialComparison second) {
  return PointState{.rounds = rounds,
                    .elapsed_s = 1,
                    .at_look = true,
                    .comparisons = {{"A/A", a_a}, {"up", first}, {"same", second}}};
}

Settings stopping_settings() {
  Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = 80;
  settings.time_budget_s = 100;
  return settings;
}

constexpr int kNinePoints = 9;

TEST(SequentialStoppingRule, StopsWhenEveryVariantIsSettledEitherWay) {
  const SequentialStoppingRule rule(stopping_settings(), kNinePoints);
  const auto quiet_aa = comparison_with(1, 0.001);
  // Beyond at α / 9 = 0.00556, and within at α: both settled.
  const StopDecision settled =
      rule.decide(look_state(20, quiet_aa, comparison_with(0.005, 1), comparison_with(1, 0.04)));
  EXPECT_EQ(settled.reason, StopReason::kSettled);
  EXPECT_NE(settled.text.find("up beyond ±2 %"), std::string::npos) << settled.text;
  EXPECT_NE(settled.text.find("same within ±2 %"), std::string::npos) << settled.text;
  // Beyond only at α, not at α / 9: it might not survive Holm, so the point goes on.
  const StopDecision open =
      rule.decide(look_state(20, quiet_aa, comparison_with(0.01, 1), comparison_with(1, 0.04)));
  EXPECT_EQ(open.reason, StopReason::kKeepGoing);
  EXPECT_NE(open.text.find("up"), std::string::npos) << open.text;
}

TEST(SequentialStoppingRule, StopsWhenTheAaCheckFails) {
  const SequentialStoppingRule rule(stopping_settings(), kNinePoints);
  const StopDecision decision = rule.decide(
      look_state(20, comparison_with(0.01, 1), comparison_with(1, 1), comparison_with(1, 1)));
  EXPECT_EQ(decision.reason, StopReason::kAaCheckFailed);
  EXPECT_NE(decision.text.find("verdicts withheld"), std::string::npos) << decision.text;
}

// Between looks, or before the first, nothing is decided on the data, however clear it looks.
TEST(SequentialStoppingRule, DecidesOnTheDataOnlyAtLooks) {
  const SequentialStoppingRule rule(stopping_settings(), kNinePoints);
  PointState between = look_state(15, comparison_with(1, 0.001), comparison_with(1e-9, 1),
                                  comparison_with(1, 1e-9));
  between.at_look = false;
  EXPECT_FALSE(rule.decide(between).stop());
  EXPECT_FALSE(rule.decide(PointState{.rounds = 20, .elapsed_s = 1, .at_look = true,
                                      .comparisons = {}})
                   .stop());
}

TEST(SequentialStoppingRule, StopsOnTheRoundAndTimeBudgets) {
  const SequentialStoppingRule rule(stopping_settings(), kNinePoints);
  const auto unsettled = comparison_with(1, 1);
  const StopDecision rounds = rule.decide(look_state(80, unsettled, unsettled, unsettled));
  EXPECT_EQ(rounds.reason, StopReason::kRoundBudgetSpent);
  EXPECT_NE(rounds.text.find("80 rounds"), std::string::npos) << rounds.text;
  PointState late = look_state(30, unsettled, unsettled, unsettled);
  late.at_look = false;
  late.elapsed_s = 100;
  EXPECT_EQ(rule.decide(late).reason, StopReason::kTimeBudgetSpent);
  late.rounds = 3;  // even before min_rounds: a budget is a promise
  EXPECT_EQ(rule.decide(late).reason, StopReason::kTimeBudgetSpent);
}

// A rule is a type: any other rule plugs into the same place.
class FixedRounds final : public StoppingRule {
 public:
  explicit FixedRounds(int rounds) : rounds_(rounds) {}
  StopDecision decide(const PointState& state) const override {
    if (state.rounds < rounds_) return {.reason = StopReason::kKeepGoing, .text = "not yet"};
    return {.reason = StopReason::kRoundBudgetSpent, .text = "fixed count reached"};
  }

 private:
  int rounds_;
};

TEST(StoppingRule, IsPluggable) {
  const std::unique_ptr<StoppingRule> fixed = std::make_unique<FixedRounds>(7);
  int rounds = 1;
  while (!fixed->decide(PointState{.rounds = rounds, .elapsed_s = 0, .at_look = false,
                                   .comparisons = {}})
              .stop()) {
    ++rounds;
  }
  EXPECT_EQ(rounds, 7);
}

TEST(PointState, AtALookSeesTheSameComparisonsAsTheAnalysis) {
  const SweepSamples sweep{.direction = Direction::kHigherIsBetter,
                           .variant_names = {"up", "down"},
                           .points = {hand_point(1, {1.0, 1.0}),
                                      hand_point(3, {1.1, 0.95}, 0.03)}};
  const Settings settings = hand_settings();
  const PointState state = point_state(sweep, 1, 12.5, settings);
  const SweepResult result = analyze_sweep(sweep, settings);

  EXPECT_EQ(state.rounds, kHandRounds);
  EXPECT_TRUE(state.at_look);
  EXPECT_EQ(state.elapsed_s, 12.5);
  ASSERT_EQ(state.comparisons.size(), 3u);
  EXPECT_EQ(state.comparisons[0].first, kAaComparisonName);
  EXPECT_DOUBLE_EQ(state.comparisons[0].second.p_beyond, result.noise[1].p_check);
  EXPECT_EQ(state.comparisons[2].first, "down");
  EXPECT_DOUBLE_EQ(state.comparisons[2].second.p_beyond,
                   result.variants[1].points[1].evidence.p_value);
  EXPECT_DOUBLE_EQ(state.comparisons[2].second.change.change_pct,
                   result.variants[1].points[1].evidence.change.change_pct);
  EXPECT_THROW(point_state(sweep, 2, 0, settings), std::invalid_argument);

  // Between looks: the rounds, nothing computed.
  PointSamples shorter = hand_point(1, {1.0}, kQuiet, 15);
  const SweepSamples between{.direction = Direction::kHigherIsBetter,
                             .variant_names = {"v"},
                             .points = {shorter}};
  const PointState no_look = point_state(between, 0, 1, settings);
  EXPECT_EQ(no_look.rounds, 15);
  EXPECT_FALSE(no_look.at_look);
  EXPECT_TRUE(no_look.comparisons.empty());
}

// ---------------------------------------------------------------------------------------------
// Simulation: whole sweeps measured as the runner measures them

// What the simulated measurements are like. A sample is
//   base(concurrency) · (1 + effect) · (1 + drift · time / run length) · exp(σ · z),
// halved with probability halved_fraction (a heavy tail: a neighbour, a page fault), where
// time counts the samples taken so far in the whole run and z is standard normal. A drift
// rises through a round too, so the arms of a round do not see quite the same level.
struct Scenario {
  double noise_sigma = 0.06;          // the study's serving-level noise
  double drift = 0;                   // total rise of the level over the run, as a fraction
  double halved_fraction = 0;
  double effect = 0;                  // the variant's true change, as a fraction
};

constexpr double kSimulatedBaseThroughput = 800;  // tokens/s, as in the runs
constexpr double kSecondsPerSample = 0.1;          // simulated wall time per arm per round
constexpr int kSweepPoints = 9;

// The decision settings of experiments/occupancy.toml, with the round budget given.
Settings study_settings(int max_rounds) {
  Settings settings;
  settings.min_effect_pct = 2;
  settings.alpha = 0.05;
  settings.min_rounds = 10;
  settings.max_rounds = max_rounds;
  settings.time_budget_s = 1e9;  // the round budget decides, as in the runs
  settings.correction = Correction::kHolm;
  return settings;
}

// One sweep of 9 points (concurrency 1, 2, 4, ...): at each, rounds of A, A′ and the variant in
// the runner's shuffled order, the default rule asked after every round, until it stops.
SweepSamples simulate_sweep(const Scenario& scenario, const Settings& settings,
                            std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  const SequentialStoppingRule rule(settings, family_size(settings, kSweepPoints, 1));
  const double run_samples = 3.0 * kSweepPoints * settings.max_rounds;
  double time = 0;
  SweepSamples sweep{.direction = Direction::kHigherIsBetter, .variant_names = {"v"}, .points = {}};
  for (int p = 0; p < kSweepPoints; ++p) {
    const double base = kSimulatedBaseThroughput * std::sqrt(static_cast<double>(1 << p));
    sweep.points.push_back({.concurrency = 1 << p, .baseline = {}, .baseline_repeat = {},
                            .variants = {RoundSamples{}}});
    PointSamples& point = sweep.points.back();
    std::array<RoundSamples*, 3> arms = {&point.baseline, &point.baseline_repeat,
                                         &point.variants[0]};
    for (int round = 1;; ++round) {
      for (const int a : shuffled({0, 1, 2}, generator)) {
        double sample = base * (1 + scenario.drift * time / run_samples) *
                        std::exp(scenario.noise_sigma * normal(generator));
        if (a == 2) sample *= 1 + scenario.effect;
        if (uniform(generator) < scenario.halved_fraction) sample /= 2;
        arms[a]->push_back(sample);
        time += 1;
      }
      const double elapsed_s = round * 3 * kSecondsPerSample;
      if (rule.decide(point_state(sweep, sweep.points.size() - 1, elapsed_s, settings)).stop()) {
        break;
      }
    }
  }
  return sweep;
}

// What a set of simulated sweeps concluded.
struct Tally {
  int sweeps = 0;
  int points = 0;
  int sweeps_with_a_false_verdict = 0;  // FASTER or SLOWER against a true change of 0
  int faster_points = 0;
  int slower_points = 0;
  int within_noise_points = 0;
  int small_change_points = 0;
  int withheld_points = 0;
  int accepted = 0;
  int rejected = 0;
  int variant_covered = 0;  // intervals covering the true change
  int a_a_covered = 0;      // A/A intervals covering 0
  long long rounds = 0;

  double per_point(int count) const { return static_cast<double>(count) / points; }
  double per_sweep(int count) const { return static_cast<double>(count) / sweeps; }
};

Tally run_sweeps(const Scenario& scenario, int max_rounds, int sweeps, std::uint64_t first_seed) {
  const Settings settings = study_settings(max_rounds);
  const double true_change_pct = scenario.effect * 100;
  Tally tally;
  for (int s = 0; s < sweeps; ++s) {
    const SweepResult result =
        analyze_sweep(simulate_sweep(scenario, settings, first_seed + s), settings);
    const VariantResult& variant = result.variants[0];
    ++tally.sweeps;
    tally.accepted += variant.verdict == VariantVerdict::kAccepted;
    tally.rejected += variant.verdict == VariantVerdict::kRejected;
    const bool any_called = !variant.faster_at.empty() || !variant.slower_at.empty();
    tally.sweeps_with_a_false_verdict += scenario.effect == 0 && any_called;
    for (std::size_t p = 0; p < variant.points.size(); ++p) {
      const PointResult& point = variant.points[p];
      ++tally.points;
      tally.faster_points += point.judgement.verdict == PointVerdict::kFaster;
      tally.slower_points += point.judgement.verdict == PointVerdict::kSlower;
      tally.within_noise_points += point.judgement.verdict == PointVerdict::kWithinNoise;
      tally.small_change_points += point.judgement.verdict == PointVerdict::kSmallChange;
      tally.withheld_points += point.judgement.verdict == PointVerdict::kWithheld;
      tally.variant_covered += point.evidence.change.interval_pct.contains(true_change_pct);
      tally.a_a_covered += result.noise[p].a_a.interval_pct.contains(0);
      tally.rounds += point.evidence.change.paired_rounds;
    }
  }
  return tally;
}

void print(const char* name, const Tally& tally) {
  std::printf(
      "[ study    ] %-32s %4d sweeps: false-verdict sweeps %.3f; points FASTER %.3f SLOWER "
      "%.3f WITHIN_NOISE %.3f SMALL %.3f WITHHELD %.3f; ACCEPTED %.3f REJECTED %.3f; coverage "
      "%.3f (A/A %.3f); %.0f rounds per point\n",
      name, tally.sweeps, tally.per_sweep(tally.sweeps_with_a_false_verdict),
      tally.per_point(tally.faster_points), tally.per_point(tally.slower_points),
      tally.per_point(tally.within_noise_points), tally.per_point(tally.small_change_points),
      tally.per_point(tally.withheld_points), tally.per_sweep(tally.accepted),
      tally.per_sweep(tally.rejected), tally.per_point(tally.variant_covered),
      tally.per_point(tally.a_a_covered), static_cast<double>(tally.rounds) / tally.points);
}

TEST(Simulation, SameSeedGivesIdenticalSweepsAndVerdicts) {
  const Scenario scenario{.effect = 0.05};
  const Settings settings = study_settings(40);
  const SweepResult first = analyze_sweep(simulate_sweep(scenario, settings, 11), settings);
  const SweepResult again = analyze_sweep(simulate_sweep(scenario, settings, 11), settings);
  for (std::size_t p = 0; p < first.noise.size(); ++p) {
    const PointResult& a = first.variants[0].points[p];
    const PointResult& b = again.variants[0].points[p];
    EXPECT_EQ(a.evidence.change.change_pct, b.evidence.change.change_pct);
    EXPECT_EQ(a.evidence.p_adjusted, b.evidence.p_adjusted);
    EXPECT_EQ(a.judgement.verdict, b.judgement.verdict);
  }
}

// Rounds drift by ±20 % while samples vary by 1 %. Paired, the drift cancels and a 5 % change
// is FASTER with a narrow interval. The same samples with the variant's rounds shuffled (same
// values, pairing destroyed) see the drift as noise: the interval widens many times over.
TEST(Simulation, PairingRoundsRemovesSharedDrift) {
  std::mt19937_64 generator(5);
  std::normal_distribution<double> normal(0, 1);
  constexpr int kRounds = 30;
  PointSamples point{.concurrency = 1, .baseline = {}, .baseline_repeat = {}, .variants = {{}}};
  for (int round = 0; round < kRounds; ++round) {
    const double level = kLevel * (1 + 0.2 * normal(generator));
    point.baseline.push_back(level * (1 + 0.01 * normal(generator)));
    point.baseline_repeat.push_back(level * (1 + 0.01 * normal(generator)));
    point.variants[0].push_back(level * 1.05 * (1 + 0.01 * normal(generator)));
  }
  Settings settings;
  settings.max_rounds = kRounds;
  SweepSamples samples{.direction = Direction::kHigherIsBetter, .variant_names = {"v"},
                       .points = {point}};
  const SweepResult paired = analyze_sweep(samples, settings);
  std::shuffle(samples.points[0].variants[0].begin(), samples.points[0].variants[0].end(),
               generator);
  const SweepResult unpaired = analyze_sweep(samples, settings);

  const PointResult& with_pairs = paired.variants[0].points[0];
  const PointResult& without = unpaired.variants[0].points[0];
  EXPECT_EQ(with_pairs.judgement.verdict, PointVerdict::kFaster);
  EXPECT_LT(with_pairs.evidence.change.half_width_pct(), 1.5);
  EXPECT_GT(without.evidence.change.half_width_pct(),
            5 * with_pairs.evidence.change.half_width_pct());
  EXPECT_NE(without.judgement.verdict, PointVerdict::kFaster);
}

// Issue 8's targets, each in simulated 9-point sweeps at 6 % per-sample noise measured as the
// runner measures (its order of the arms, its rule after every round, its looks), with the
// decision settings of experiments/occupancy.toml (2 % minimum effect, α = 0.05, Holm). Each
// target is asserted as stated, with no Monte-Carlo allowance: the design's own rates are far
// from the targets' edges (the printed lines show by how much).

// A/A: a variant that changes nothing must not be called FASTER or SLOWER at any point, in
// ≥ 1000 sweeps each of plain noise, a +20 % drift over the run, and 1 % of samples halved.
TEST(SimulationStudy, IdenticalArmsAreNeverCalledFasterOrSlower) {
  constexpr int kSweeps = 1000;
  const Tally plain = run_sweeps({}, 60, kSweeps, 100000);
  const Tally drift = run_sweeps({.drift = 0.2}, 60, kSweeps, 200000);
  const Tally tails = run_sweeps({.halved_fraction = 0.01}, 60, kSweeps, 300000);
  print("A/A, 6 % noise, 60 rounds", plain);
  print("A/A, +20 % drift", drift);
  print("A/A, 1 % of samples halved", tails);
  for (const Tally* tally : {&plain, &drift, &tails}) {
    EXPECT_LE(tally->sweeps_with_a_false_verdict, kSweeps / 20);  // ≤ 5 % of sweeps
  }
  // Coverage of the 95 % intervals of the (null) variant and of the A/A comparison: at 9000
  // points a rate of 95 % has sd 0.23 %, so 93-97 % is ±8 sd, room for the trimmed mean's
  // small-sample approximation but not for a wrong level.
  for (const Tally* tally : {&plain, &drift, &tails}) {
    EXPECT_GE(tally->per_point(tally->variant_covered), 0.93);
    EXPECT_LE(tally->per_point(tally->variant_covered), 0.97);
    EXPECT_GE(tally->per_point(tally->a_a_covered), 0.93);
    EXPECT_LE(tally->per_point(tally->a_a_covered), 0.97);
  }
}

// +5 %: FASTER at ≥ 90 % of points within 150 rounds, never WITHIN_NOISE (nor a small
// change), intervals covering +5 % at 93-97 %. −5 %: REJECTED in ≥ 90 % of runs.
TEST(SimulationStudy, AFivePercentChangeIsFoundWithin150Rounds) {
  constexpr int kSweeps = 300;
  const Tally up = run_sweeps({.effect = 0.05}, 150, kSweeps, 400000);
  const Tally down = run_sweeps({.effect = -0.05}, 150, kSweeps, 500000);
  print("+5 %, 150 rounds", up);
  print("-5 %, 150 rounds", down);
  EXPECT_GE(up.per_point(up.faster_points), 0.90);
  EXPECT_EQ(up.within_noise_points + up.small_change_points, 0);
  EXPECT_GE(up.per_point(up.variant_covered), 0.93);
  EXPECT_LE(up.per_point(up.variant_covered), 0.97);
  EXPECT_GE(down.per_sweep(down.rejected), 0.90);
  EXPECT_EQ(down.within_noise_points + down.small_change_points, 0);
}

// +10 %: FASTER at ≥ 99 % of points within 60 rounds.
TEST(SimulationStudy, ATenPercentChangeIsFoundWithin60Rounds) {
  const Tally ten = run_sweeps({.effect = 0.10}, 60, 300, 600000);
  print("+10 %, 60 rounds", ten);
  EXPECT_GE(ten.per_point(ten.faster_points), 0.99);
}

// The plan: the rounds that rounds_for_power asks for, at the noise a pilot measures, give a
// simulated power within ±10 points of the promised 90 %.
TEST(SimulationStudy, PlannedRoundsDeliverThePromisedPower) {
  const Scenario scenario{.effect = 0.08};
  // The pilot: 2000 paired rounds of the variant against A at this noise, as a long first
  // look would measure them.
  std::mt19937_64 generator(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> pilot;
  for (int r = 0; r < 2000; ++r) {
    pilot.push_back(scenario.noise_sigma * (normal(generator) - normal(generator)));
  }
  const LogChange pilot_change = trimmed_log_change(pilot);
  const double sd_log = pilot_change.standard_error * std::sqrt(2000.0);
  const int planned = *rounds_for_power(sd_log, 8.0, 2.0, planning_level(study_settings(150),
                                                                         kSweepPoints));
  const Tally tally = run_sweeps(scenario, planned, 300, 700000);
  std::printf("[ study    ] plan: sd %.4f per round, +8 %% needs %d rounds; simulated power "
              "%.3f\n",
              sd_log, planned, tally.per_point(tally.faster_points));
  print("+8 %, the planned rounds", tally);
  EXPECT_GE(tally.per_point(tally.faster_points), 0.80);
  EXPECT_LE(tally.per_point(tally.faster_points), 1.00);
}

}  // namespace
}  // namespace mlalab::ab
