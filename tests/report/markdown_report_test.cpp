#include "report/markdown_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/number_text.h"
#include "report/format.h"
#include "report/record_view.h"
#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

std::string markdown_of(const ab::RunRecord& record) {
  std::ostringstream out;
  MarkdownReport().write(record, out);
  return out.str();
}

const ab::RunRecord& analysed() {
  static const ab::RunRecord record = testing::synthetic_record();
  return record;
}

const ab::PointResult& result_at(const ab::RunRecord& record, const std::string& variant,
                                 int concurrency) {
  const ab::VariantResult* result = variant_result(record, variant);
  EXPECT_NE(result, nullptr) << variant;
  const ab::PointResult* point = point_result(*result, concurrency);
  EXPECT_NE(point, nullptr) << variant << " at " << concurrency;
  return *point;
}

std::string change_at(const std::string& variant, int concurrency) {
  return short_percent(result_at(analysed(), variant, concurrency).evidence.change.change_pct);
}

const ab::PointVerdict& verdict_at(const std::string& variant, int concurrency) {
  return result_at(analysed(), variant, concurrency).judgement.verdict;
}

// The simulation gives the verdicts it was built for; the report tests below rely on them.
TEST(MarkdownReport, SyntheticRecordHasTheIntendedVerdicts) {
  const ab::RunRecord& record = analysed();
  ASSERT_TRUE(record.analysis);
  // A′ drifts at C4 alone: the A/A check fails there, and every verdict at C4 is withheld.
  for (const ab::PointNoise& noise : record.analysis->noise) {
    EXPECT_EQ(noise.flagged, noise.concurrency == 4) << noise.concurrency;
  }
  for (const ab::VariantResult& variant : record.analysis->variants) {
    EXPECT_EQ(verdict_at(variant.name, 4), ab::PointVerdict::kWithheld) << variant.name;
  }
  EXPECT_EQ(variant_result(record, "8 warps")->verdict, ab::VariantVerdict::kRejected);
  EXPECT_EQ(variant_result(record, "8 warps")->slower_at, (std::vector<int>{1, 16, 64}));
  EXPECT_EQ(variant_result(record, "3 stages")->verdict, ab::VariantVerdict::kMixed);
  EXPECT_EQ(variant_result(record, "3 stages")->faster_at, (std::vector<int>{1}));
  EXPECT_EQ(variant_result(record, "3 stages")->slower_at, (std::vector<int>{64}));
  EXPECT_EQ(verdict_at("3 stages", 16), ab::PointVerdict::kWithinNoise);
  EXPECT_EQ(variant_result(record, "same code")->verdict, ab::VariantVerdict::kInconclusive);
  EXPECT_EQ(variant_result(record, "broken"), nullptr);  // INVALID: never analysed
  EXPECT_EQ(variant_result(record, "4 stages")->verdict, ab::VariantVerdict::kInconclusive);
  for (const int concurrency : {1, 16, 64}) {
    EXPECT_EQ(verdict_at("4 stages", concurrency), ab::PointVerdict::kAmbiguous);
    EXPECT_TRUE(result_at(record, "4 stages", concurrency)
                    .evidence.change.interval_pct.contains(0));
  }
  EXPECT_EQ(variant_result(record, "32 heads")->verdict, ab::VariantVerdict::kAccepted);
  EXPECT_EQ(verdict_at("32 heads", 1), ab::PointVerdict::kFaster);
  EXPECT_EQ(verdict_at("32 heads", 16), ab::PointVerdict::kSmallChange);
  EXPECT_EQ(verdict_at("32 heads", 64), ab::PointVerdict::kAmbiguous);
  const ab::Interval& across = result_at(record, "32 heads", 64).evidence.change.interval_pct;
  EXPECT_LT(across.lower, -2);  // across −T …
  EXPECT_LT(across.upper, 0);   // … and clear of 0
  EXPECT_GT(across.upper, -2);
}

TEST(MarkdownReport, HasEverySectionInOrder) {
  const std::string text = markdown_of(analysed());
  std::size_t at = 0;
  for (const char* heading :
       {"# A/B experiment: warps_and_stages", "## What was tested", "## Why", "## How",
        "## Baseline", "## Per-variant results", "## Monotonicity", "## Conclusion",
        "## How to reproduce"}) {
    const std::size_t found = text.find(heading, at);
    ASSERT_NE(found, std::string::npos) << heading;
    at = found;
  }
  EXPECT_EQ(text.find("PARTIAL"), std::string::npos);
}

TEST(MarkdownReport, WhatWhyAndHowCarryTheExperiment) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  // Arms with configs and validity; the INVALID one with its reason.
  EXPECT_NE(text.find("| 8 warps "), std::string::npos);
  EXPECT_NE(text.find("h16_t16_w8_s2 heuristic"), std::string::npos);
  EXPECT_NE(text.find("INVALID: out[0][3][17] = nan, reference 0.25"), std::string::npos);
  EXPECT_NE(text.find("`" + record.arms[2].code_hash.substr(0, 12) + "`"), std::string::npos);
  // Why: the hypothesis, quoted line by line.
  EXPECT_NE(text.find("> More warps hide the latency of the KV loads: +20 %.\n> Stages: +5 %."),
            std::string::npos);
  // How: settings, the correction note, the environment, throttling, stop reasons, time.
  EXPECT_NE(text.find(ab::correction_method_note(record.experiment.stats)), std::string::npos);
  EXPECT_NE(text.find("Threshold T = 2% (min_effect_pct, the smallest change that matters) at "
                      "every point; α = 0.05, so intervals at 95% confidence"),
            std::string::npos);
  EXPECT_EQ(text.find("bootstrap"), std::string::npos);
  EXPECT_EQ(text.find("resamples"), std::string::npos);
  EXPECT_EQ(text.find("max(A/A band"), std::string::npos);
  EXPECT_NE(text.find("NVIDIA H200 (132 SMs)"), std::string::npos);
  EXPECT_NE(text.find("driver 570.86.15 (CUDA 12.8); CUDA runtime 13.0; commit `0123456789ab`"),
            std::string::npos);
  EXPECT_NE(text.find("**Throttled samples excluded.** 2 of 560"), std::string::npos);
  EXPECT_NE(text.find("| round budget of 20 rounds spent |"), std::string::npos);
  EXPECT_NE(text.find("**Time taken.** 50.0 s, started 2025-06-01T12:00:00Z"),
            std::string::npos);
  EXPECT_NE(text.find("1, 4, 16, 64"), std::string::npos);
}

// The looks and their shares of α, from the analysis or, without one, from the settings. The
// synthetic settings look after 10 and 20 rounds (max_rounds): t = 0.5 and 1. With the
// O'Brien-Fleming-type α(t) = 2 − 2 Φ(1.95996 / √t), α(0.5) = 2 − 2 Φ(2.77181) = 0.005575 of
// α = 0.05, a share of 11 %; the last look spends the remaining 89 %.
TEST(MarkdownReport, HowStatesTheLooksWithTheirSharesOfAlpha) {
  const std::string looks =
      "Looks after 10 and 20 rounds, spending 11% and 89% of α (an O'Brien-Fleming-type "
      "spending: almost nothing early); a p-value is the smallest over the point's looks of p / "
      "(the look's share), so that stopping at any look keeps the error rate.";
  EXPECT_NE(markdown_of(analysed()).find(looks), std::string::npos);
  ab::RunRecord record = analysed();
  record.analysis.reset();
  EXPECT_NE(markdown_of(record).find(looks), std::string::npos);
  // The defaults, 10 to 150 rounds: t = 1/15, 2/15, 4/15, 8/15 and 1 give α(t) ≈ 3e-14, 8e-8,
  // 1.5e-4, 7.3e-3 and 0.05, so shares of about 0, 0, 0.3 %, 14 % and 85 %.
  record.experiment.stats.max_rounds = ab::kDefaultMaxRounds;
  EXPECT_NE(markdown_of(record).find("Looks after 10, 20, 40, 80 and 150 rounds, spending 0.0%, "
                                     "0.0%, 0.3%, 14% and 85% of α"),
            std::string::npos)
      << markdown_of(record);
  // One look: all of α at once.
  record.experiment.stats.min_rounds = ab::kDefaultMaxRounds;
  EXPECT_NE(markdown_of(record).find("One look, after 150 rounds, spending all of α. A point is "),
            std::string::npos);
}

TEST(MarkdownReport, HowSaysWhatEachVerdictMeansAndWhatTheAaCheckDoes) {
  const std::string text = markdown_of(analysed());
  for (const std::string& expected : {
           std::string("A change is the ") + fmt::format("{:g}", 100 * ab::kTrimFraction) +
               "% trimmed mean of the paired log ratios ln(variant / A), one per round, as a %, "
               "with a Student-t interval; nothing is resampled.",
           std::string("WITHIN_NOISE when its interval lies inside ±T and contains 0 (no change "
                       "seen); SMALL_CHANGE when it lies inside ±T but excludes 0 (a real "
                       "change, smaller than what matters)"),
           std::string("- **A/A check.** A′ is the baseline again, so A′ − A is no change by "
                       "construction: at a point where it moves beyond ±2% by its own test at α "
                       "(adjusted for the looks), the design failed to cancel something (an "
                       "order effect, a noisy neighbour, a drift), and the point's verdicts are "
                       "WITHHELD.")}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
}

TEST(MarkdownReport, BaselineSectionCharacterizesTheVariance) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  const std::string section = text.substr(text.find("## Baseline"),
                                          text.find("## Per-variant") - text.find("## Baseline"));
  EXPECT_NE(section.find("variance characterization"), std::string::npos);
  for (const ab::PointNoise& noise : record.analysis->noise) {
    EXPECT_NE(section.find(quantity_text(noise.baseline_median)), std::string::npos);
    EXPECT_NE(section.find(fmt::format("±{:.2f}%", noise.band_pct)), std::string::npos);
  }
  // The CV of C1's baseline samples: one of them was throttled and is left out.
  const std::vector<double> values = arm_values(record, 0, 0);
  EXPECT_EQ(values.size(), testing::kRounds - 1u);
  EXPECT_NE(section.find(fmt::format("{:.2f}%", 100 * coefficient_of_variation(values))),
            std::string::npos);
  // The band is no longer the threshold.
  EXPECT_EQ(section.find("max(band"), std::string::npos);
}

// The A/A check's result at every point: ok where A′ stayed with A, FLAGGED where it drifted.
TEST(MarkdownReport, BaselineSectionGivesTheAaCheckAtEveryPoint) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  const std::string section = text.substr(text.find("## Baseline"),
                                          text.find("## Per-variant") - text.find("## Baseline"));
  EXPECT_NE(section.find("| A/A check "), std::string::npos);
  for (const ab::PointNoise& noise : record.analysis->noise) {
    const std::string row =
        section.substr(section.find("| " + point_label(noise.concurrency) + " "));
    const std::string line = row.substr(0, row.find('\n'));
    const std::string expected =
        noise.flagged ? fmt::format("| FLAGGED (p {:.3g}): verdicts withheld ", noise.p_check)
                      : fmt::format("| ok (p {:.3g})", noise.p_check);
    EXPECT_NE(line.find(expected), std::string::npos) << line;
  }
  // Too few rounds to check: said so, not "ok".
  ab::RunRecord short_run = analysed();
  short_run.analysis->noise[0].a_a.paired_rounds = 6;
  EXPECT_NE(markdown_of(short_run).find("| not checked: 6 of the 10 paired rounds it needs "),
            std::string::npos);
}

// The per-variant table's row of `variant` at `concurrency`.
std::string row_of(const std::string& text, const std::string& variant, int concurrency) {
  const std::size_t section = text.find("### " + variant + ":");
  const std::size_t row = text.find("| " + point_label(concurrency) + " ", section);
  return text.substr(row, text.find('\n', row) - row);
}

TEST(MarkdownReport, PerVariantTablesGiveChangeIntervalMdeVerdictAndPrediction) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  for (const char* heading : {"### 8 warps: REJECTED", "### 3 stages: MIXED",
                              "### same code: INCONCLUSIVE", "### 4 stages: INCONCLUSIVE",
                              "### broken: INVALID", "### 32 heads: ACCEPTED"}) {
    EXPECT_NE(text.find(heading), std::string::npos) << heading;
  }
  const ab::PointResult& c1 = result_at(record, "8 warps", 1);
  const std::string row = row_of(text, "8 warps", 1);
  EXPECT_NE(row.find(signed_percent(c1.evidence.change.change_pct) + " | " +
                     interval_text(c1.evidence.change.interval_pct)),
            std::string::npos)
      << row;
  EXPECT_NE(row.find(fmt::format(" {:.1f}% |", c1.evidence.mde_pct)), std::string::npos) << row;
  EXPECT_NE(row.find("| SLOWER "), std::string::npos) << row;
  EXPECT_NE(row_of(text, "32 heads", 1).find("| FASTER "), std::string::npos);
  EXPECT_NE(text.find(" MDE |"), std::string::npos);
  EXPECT_EQ(text.find("| threshold |"), std::string::npos) << "T is the same at every point";
  EXPECT_NE(text.find("the threshold is ±2% at every point. p is the test of \"|change| ≤ 2%\", "
                      "adjusted for the point's looks"),
            std::string::npos);
  EXPECT_NE(text.find("Predicted +20%; measured "), std::string::npos);
  EXPECT_NE(text.find("INVALID (out[0][3][17] = nan, reference 0.25): never timed."),
            std::string::npos);
}

// Every verdict cell says what was seen: no real change reads as "within noise".
TEST(MarkdownReport, VerdictCellsSayWhatWasSeen) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  EXPECT_NE(row_of(text, "3 stages", 16)
                .find("| WITHIN_NOISE: no change seen, and none beyond ±2% "),
            std::string::npos);
  const ab::Change& small = result_at(record, "32 heads", 16).evidence.change;
  EXPECT_NE(row_of(text, "32 heads", 16)
                .find(fmt::format("| SMALL_CHANGE: a small change, {} {}, below the 2% that "
                                  "matters ",
                                  signed_percent(small.change_pct),
                                  interval_text(small.interval_pct))),
            std::string::npos)
      << row_of(text, "32 heads", 16);
  const ab::PointNoise& drifting = *point_noise(record, 4);
  EXPECT_NE(row_of(text, "8 warps", 4)
                .find(fmt::format("| WITHHELD: the A/A check failed at this point (A′ − A {} {}) ",
                                  signed_percent(drifting.a_a.change_pct),
                                  interval_text(drifting.a_a.interval_pct))),
            std::string::npos)
      << row_of(text, "8 warps", 4);
}

// An AMBIGUOUS interval clear of 0 says the least it shows and that it may matter; one across
// 0 gives its range; both give the rounds in all that would settle them.
TEST(MarkdownReport, AmbiguousCellsSayWhatTheIntervalAllowsAndTheRoundsInAll) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  const ab::PointResult& slower = result_at(record, "32 heads", 64);
  ASSERT_TRUE(slower.judgement.rounds_to_settle);
  EXPECT_NE(row_of(text, "32 heads", 64)
                .find(fmt::format("| AMBIGUOUS: at least {:.1f}% slower, maybe more than 2%: ≈ {} "
                                  "rounds in all would settle it",
                                  -slower.evidence.change.interval_pct.upper,
                                  group_thousands(*slower.judgement.rounds_to_settle))),
            std::string::npos)
      << row_of(text, "32 heads", 64);
  for (const int concurrency : {1, 16, 64}) {
    const ab::PointResult& point = result_at(record, "4 stages", concurrency);
    ASSERT_TRUE(point.judgement.rounds_to_settle);
    const std::string expected = fmt::format(
        "| AMBIGUOUS: could be anything from {} to {}: ≈ {} rounds in all would settle it",
        short_percent(point.evidence.change.interval_pct.lower),
        short_percent(point.evidence.change.interval_pct.upper),
        group_thousands(*point.judgement.rounds_to_settle));
    EXPECT_NE(row_of(text, "4 stages", concurrency).find(expected), std::string::npos)
        << expected;
  }
  EXPECT_EQ(text.find("more rounds ("), std::string::npos) << "rounds in all, not more";
}

// The rarer AMBIGUOUS cases, each on the "32 heads" point at C64 (20 rounds, T = 2 %).
TEST(MarkdownReport, AmbiguousCellsForTheRarerCases) {
  const auto cell_with = [](const auto& change_point) {
    ab::RunRecord record = analysed();
    ab::PointResult& point = record.analysis->variants.back().points.back();
    EXPECT_EQ(point.judgement.verdict, ab::PointVerdict::kAmbiguous);
    change_point(point);
    return row_of(markdown_of(record), "32 heads", 64);
  };
  // The interval clears +T, but the test adjusted for the looks and the points does not.
  EXPECT_NE(cell_with([](ab::PointResult& point) {
              point.evidence.change.interval_pct = {.lower = 2.5, .upper = 6.0};
              point.judgement.rounds_to_settle = 40;
            }).find("| AMBIGUOUS: at least 2.5% faster, but not beyond ±2% once corrected for "
                    "the looks and the points: ≈ 40 rounds in all would settle it"),
            std::string::npos);
  // Inside ±T and clear of 0, but not yet shown within ±T at the look's share of α.
  EXPECT_NE(cell_with([](ab::PointResult& point) {
              point.evidence.change.interval_pct = {.lower = -1.9, .upper = -0.4};
            }).find("| AMBIGUOUS: 0.4% to 1.9% slower, but not yet shown within ±2% once "
                    "corrected for the looks: ≈ "),
            std::string::npos);
  // No number of rounds is expected to settle it.
  EXPECT_NE(cell_with([](ab::PointResult& point) { point.judgement.rounds_to_settle.reset(); })
                .find(": no practical number of rounds would settle it"),
            std::string::npos);
  // The model asked for no more rounds than were run: say so, not "≈ 12 rounds in all".
  EXPECT_NE(cell_with([](ab::PointResult& point) { point.judgement.rounds_to_settle = 12; })
                .find(": 12 rounds should have settled it by the planning model, and 20 did "
                      "not: a borderline estimate, more rounds would tell"),
            std::string::npos);
  // Cut short before min_rounds: no verdict yet.
  EXPECT_NE(cell_with([](ab::PointResult& point) { point.evidence.change.paired_rounds = 6; })
                .find("| AMBIGUOUS: 6 of the 10 paired rounds a verdict needs "),
            std::string::npos);
}

// change.svg's caption names every marker and the band it is drawn over.
TEST(MarkdownReport, ChangePictureCaptionNamesEveryVerdictsMarker) {
  EXPECT_NE(markdown_of(analysed()).find(
                "over the grey band of ±T = ±2%: FASTER (▲) or SLOWER (▼) beyond it by the "
                "corrected test, WITHIN_NOISE (●) inside it and around 0, SMALL_CHANGE (■) inside "
                "it but away from 0, AMBIGUOUS (◇) otherwise, WITHHELD (✕) where the A/A check "
                "failed"),
            std::string::npos);
}

// An arm that passed the reference check at the first point and failed at a later one was
// timed before: the report says so instead of "never timed".
TEST(MarkdownReport, AnArmInvalidatedLaterSaysWhereItWasTimed) {
  ab::RunRecord record = analysed();
  const auto broken = std::find_if(record.arms.begin(), record.arms.end(),
                                   [](const ab::ArmRecord& arm) { return arm.name == "broken"; });
  ASSERT_NE(broken, record.arms.end());
  ab::Sample early;
  early.point = 0;
  early.arm = static_cast<int>(broken - record.arms.begin());
  early.value = 1000.0;
  early.time_us = 8000.0;
  record.samples.push_back(early);
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("INVALID (out[0][3][17] = nan, reference 0.25): timed at 1 earlier point "
                      "before that, samples kept in results.json but left out of the analysis."),
            std::string::npos);
  EXPECT_EQ(text.find("never timed"), std::string::npos);
}
TEST(MarkdownReport, MonotonicityFlagsTheDipWithTheSplitChange) {
  const std::string text = markdown_of(analysed());
  EXPECT_NE(text.find("- **baseline**: C16 → C64: throughput falls by 14."), std::string::npos);
  EXPECT_NE(text.find("(the baseline's splits go 2 → 1)"), std::string::npos);
  EXPECT_NE(text.find("- **8 warps**: C16 → C64"), std::string::npos);
}

// A tuned baseline may launch balanced at some points: the dip note names the workers.
TEST(MarkdownReport, TheDipNoteNamesABalancedBaselinesWorkers) {
  ab::RunRecord record = analysed();
  for (ab::PointRecord& point : record.points) {
    if (point.concurrency == 64) {
      point.splits = 1;
      point.workers = 66;
    }
  }
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("(the baseline's splits go 2 → 66 workers)"), std::string::npos);
}

TEST(MarkdownReport, PointsTableShowsABalancedBaselinesWorkersForItsSplits) {
  ab::RunRecord record = analysed();
  record.points[0].splits = 1;
  record.points[0].workers = 66;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("| 66 workers |"), std::string::npos);
  EXPECT_NE(text.find("(a balanced split: its workers)"), std::string::npos);
}

TEST(MarkdownReport, MonotonicitySaysNoneWithoutDips) {
  const ab::RunRecord record = testing::synthetic_record({1000, 3800, 14000, 40000});
  EXPECT_NE(markdown_of(record).find("Dips: none."), std::string::npos);
}

// ", more than max_rounds = 20 allows; raise ...": the synthetic record's 20 rounds settle none
// of its AMBIGUOUS points.
const std::string kRaiseMaxRounds =
    ", more than max_rounds = 20 allows; raise decision.max_rounds (and time_budget_s)";

TEST(MarkdownReport, ConclusionNamesEveryVerdictWithItsNumbers) {
  const std::string conclusion = conclusion_paragraph(analysed());
  // C4 is withheld for every variant, with the reason.
  EXPECT_NE(conclusion.find("8 warps: REJECTED, slower at C1, C16 and C64 (" +
                            change_at("8 warps", 1) + " at C1 … " + change_at("8 warps", 64) +
                            " at C64), withheld at C4 (the A/A check failed there); predicted "
                            "+20%."),
            std::string::npos)
      << conclusion;
  // MIXED names the points of both directions.
  EXPECT_NE(conclusion.find("3 stages: MIXED, faster at C1 (" + change_at("3 stages", 1) +
                            " at C1) but slower at C64 (" + change_at("3 stages", 64) +
                            " at C64), within noise at C16, withheld at C4 (the A/A check failed "
                            "there); predicted +5.0%."),
            std::string::npos)
      << conclusion;
  EXPECT_NE(conclusion.find("same code: INCONCLUSIVE, within noise at C1, C16 and C64 (largest "
                            "change "),
            std::string::npos)
      << conclusion;
  EXPECT_NE(conclusion.find("; no prediction."), std::string::npos);
  EXPECT_NE(conclusion.find("4 stages: INCONCLUSIVE, ambiguous at C1, C16 and C64 (up to ≈ "),
            std::string::npos)
      << conclusion;
  EXPECT_NE(conclusion.find("broken: INVALID (out[0][3][17] = nan, reference 0.25): never timed."),
            std::string::npos);
  // One paragraph.
  EXPECT_EQ(conclusion.find('\n'), std::string::npos);
}

// A small change is named as one, never as noise; AMBIGUOUS advice counts rounds in all.
TEST(MarkdownReport, ConclusionNamesASmallChangeAsSuch) {
  const std::string conclusion = conclusion_paragraph(analysed());
  const std::size_t start = conclusion.find("32 heads: ");
  ASSERT_NE(start, std::string::npos) << conclusion;
  const std::string sentence = conclusion.substr(start);
  const ab::PointResult& ambiguous = result_at(analysed(), "32 heads", 64);
  ASSERT_TRUE(ambiguous.judgement.rounds_to_settle);
  EXPECT_EQ(sentence,
            "32 heads: ACCEPTED, faster at C1 (" + change_at("32 heads", 1) +
                " at C1), a small change at C16 (" + change_at("32 heads", 16) +
                ", below the 2% that matters), ambiguous at C64 (≈ " +
                group_thousands(*ambiguous.judgement.rounds_to_settle) +
                " rounds in all would settle it" + kRaiseMaxRounds +
                "), withheld at C4 (the A/A check failed there); predicted +4.0%.");
  EXPECT_EQ(sentence.find("within noise"), std::string::npos);
}

// An INCONCLUSIVE variant says what it could not have seen: the largest MDE of its points with
// a verdict (C4 is withheld), when they are close.
TEST(MarkdownReport, ConclusionSaysWhatAnInconclusiveRunCouldNotHaveSeen) {
  const ab::RunRecord& record = analysed();
  const std::string conclusion = conclusion_paragraph(record);
  double largest = 0;
  for (const int concurrency : {1, 16, 64}) {
    largest = std::max(largest, result_at(record, "same code", concurrency).evidence.mde_pct);
  }
  EXPECT_NE(conclusion.find(fmt::format(
                "(the A/A check failed there); this run could not have seen changes smaller than "
                "{:.1f}% (the minimum detectable effect at 90% power, the largest over its "
                "points); no prediction.",
                largest)),
            std::string::npos)
      << conclusion;
  // Verdicts that decided something need no such clause.
  const std::string rejected = conclusion.substr(0, conclusion.find("3 stages:"));
  EXPECT_EQ(rejected.find("could not have seen"), std::string::npos);
}

// MDEs more than 1.5× apart are named point by point.
TEST(MarkdownReport, ConclusionNamesTheMdePerPointWhenTheyDifferALot) {
  ab::RunRecord record = analysed();
  ab::VariantResult& same_code = record.analysis->variants[2];
  ASSERT_EQ(same_code.name, "same code");
  same_code.points[0].evidence.mde_pct = 1.04;
  same_code.points[2].evidence.mde_pct = 3.0;
  same_code.points[3].evidence.mde_pct = 4.5;
  EXPECT_NE(conclusion_paragraph(record).find(
                "; this run could not have seen changes smaller than 1.0% at C1, 3.0% at C16 "
                "and 4.5% at C64 (the minimum detectable effect at 90% power); no prediction."),
            std::string::npos)
      << conclusion_paragraph(record);
}

TEST(MarkdownReport, HowToReproduceInlinesCommandCommitAndFile) {
  const std::string text = markdown_of(analysed());
  const std::string section = text.substr(text.find("## How to reproduce"));
  EXPECT_NE(section.find("```bash\ngit checkout 0123456789ab\nbash scripts/build.sh\n"
                         "build/bin/mlalab ab experiments/warps_and_stages.toml\n```"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find(std::string("```toml\n") + testing::kSourceText + "```"),
            std::string::npos);
}

// The build line is the selection the run's binary had, not the default build of every
// variant for three architectures.
TEST(MarkdownReport, HowToReproduceBuildsTheRunsSelection) {
  ab::RunRecord record = analysed();
  record.build_command =
      "MLALAB_VARIANTS='^(h16_t16_w4_s2|h16_t16_w8_s2)$' MLALAB_CUDA_ARCHS=90a bash "
      "scripts/build.sh";
  const std::string section = markdown_of(record).substr(
      markdown_of(record).find("## How to reproduce"));
  EXPECT_NE(section.find("git checkout 0123456789ab\n" + record.build_command +
                         "\nbuild/bin/mlalab ab"),
            std::string::npos)
      << section;
}

// A run that measured 1 of its 4 points concludes about that point only.
TEST(MarkdownReport, ConclusionNamesOnlyThePointsMeasured) {
  ab::RunRecord record = analysed();
  std::erase_if(record.samples, [](const ab::Sample& sample) { return sample.point != 0; });
  for (std::size_t p = 1; p < record.points.size(); ++p) {
    record.points[p].rounds = 0;
    record.points[p].stop_reason = ab::StopReason::kKeepGoing;
  }
  ab::SweepSamples sweep = testing::sweep_of(record);
  sweep.points.resize(1);
  record.analysis = ab::analyze_sweep(sweep, record.experiment.stats);
  record.partial = true;
  const std::string conclusion = conclusion_paragraph(record);
  EXPECT_EQ(conclusion.find("at every concurrency"), std::string::npos) << conclusion;
  EXPECT_NE(conclusion.find("same code: INCONCLUSIVE, within noise at C1 (largest change"),
            std::string::npos)
      << conclusion;
  EXPECT_NE(conclusion.find(fmt::format("(3 of 4 sweep points not measured); this run could not "
                                        "have seen changes smaller than {:.1f}%",
                                        record.analysis->variants[2].points[0].evidence.mde_pct)),
            std::string::npos)
      << conclusion;
}

// Advice to run more rounds than the settings allow says so: the synthetic record's
// max_rounds is its 20 rounds.
TEST(MarkdownReport, AmbiguousAdviceBeyondMaxRoundsSaysToRaiseIt) {
  ab::RunRecord record = analysed();
  ASSERT_EQ(record.experiment.stats.max_rounds, testing::kRounds);
  const std::string text = markdown_of(record);
  const std::string advice = "more than max_rounds = 20 allows; raise decision.max_rounds";
  const std::string section = text.substr(text.find("### 4 stages"));
  EXPECT_NE(section.find(advice), std::string::npos) << section;
  EXPECT_NE(conclusion_paragraph(record).find(advice), std::string::npos)
      << conclusion_paragraph(record);
  // With room for them, no such note.
  record.experiment.stats.max_rounds = 1000000;
  EXPECT_EQ(markdown_of(record).find("more than max_rounds"), std::string::npos);
}

TEST(MarkdownReport, PartialRunSaysSoAtTheTopWithTheReason) {
  ab::RunRecord record = analysed();
  record.partial = true;
  record.partial_reason = "interrupted (Ctrl-C) during C64, round 12";
  const std::string text = markdown_of(record);
  const std::size_t banner =
      text.find("**PARTIAL RESULTS: interrupted (Ctrl-C) during C64, round 12.**");
  ASSERT_NE(banner, std::string::npos);
  EXPECT_LT(banner, text.find("## What was tested"));
  EXPECT_EQ(conclusion_paragraph(record).rfind("From a partial run:", 0), 0u);
}

TEST(MarkdownReport, WithoutAnalysisSaysSoEverywhere) {
  ab::RunRecord record = analysed();
  record.analysis.reset();
  record.partial = true;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("**PARTIAL RESULTS: the run ended before every point stopped.**"),
            std::string::npos);
  EXPECT_NE(text.find("No analysis: too little was measured, so the A/A columns are empty."),
            std::string::npos);
  EXPECT_NE(text.find("### 8 warps: no analysis"), std::string::npos);
  EXPECT_NE(text.find("Not checked: no analysis."), std::string::npos);
  EXPECT_NE(text.find("no conclusion, as the run measured too little for an analysis."),
            std::string::npos);
  // Still there: the INVALID arm and the reproduction.
  EXPECT_NE(text.find("broken: INVALID ("), std::string::npos);
  EXPECT_NE(text.find("## How to reproduce"), std::string::npos);
}

TEST(MarkdownReport, EmptyRecordStillWritesEverySection) {
  ab::RunRecord record;
  record.experiment.name = "empty";
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("No sweep point was measured."), std::string::npos);
  EXPECT_NE(text.find("No baseline was measured."), std::string::npos);
  EXPECT_NE(text.find("No variants."), std::string::npos);
  EXPECT_NE(text.find("## How to reproduce"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The report's environment: what ran the arms (the "What was tested" line and the How
// section's Environment item), how busy the host was at the start and at the end, and the
// warning when other processes held the CPUs.

// A 2-thread host, lightly loaded at the start and at the end.
ab::EnvironmentRecord host(Backend backend) {
  ab::EnvironmentRecord environment = testing::two_thread_host(backend);
  environment.load_at_start = {.load_1min = 0.34, .load_5min = 0.7, .load_15min = 0.4,
                               .other_cpu_share = 0.031, .share_window_s = 0.5};
  environment.load_at_end = {.load_1min = 1.95, .load_5min = 1.1, .load_15min = 0.62,
                             .other_cpu_share = 0.042, .share_window_s = 61.0};
  return environment;
}

ab::RunRecord cpu_run() {
  ab::RunRecord record = testing::synthetic_record();
  record.experiment.backend = Backend::kCpu;
  record.environment = host(Backend::kCpu);
  return record;
}

TEST(MarkdownReportEnvironment, CpuRunNamesTheHostAndItsLoadAtStartAndEnd) {
  const std::string text = markdown_of(cpu_run());
  EXPECT_NE(text.find("Experiment `warps_and_stages` (file `experiments/warps_and_stages.toml`) "
                      "on the cpu backend, host vm (AMD EPYC 7B13, 2 threads): 6 variants"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Environment.** The cpu backend on host vm (AMD EPYC 7B13, 2 "
                      "threads); commit `0123456789ab`.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Host load.** At the start: load average 0.34, 0.70, 0.40 (1, 5, 15 "
                      "min); other processes used 3.1% of the 2 usable CPUs over 0.5 s. At the "
                      "end: load average 1.95, 1.10, 0.62 (1, 5, 15 min), this run's own threads "
                      "included; other processes used 4.2% of the 2 usable CPUs during the "
                      "run.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("**Warning:**"), std::string::npos) << "3-4% is an idle machine";
}

TEST(MarkdownReportEnvironment, WarnsWhenOtherProcessesHeldTheCpus) {
  ab::RunRecord record = cpu_run();
  record.environment.usable_cpus = 1;  // taskset -c 0
  record.environment.load_at_end.other_cpu_share = 0.37;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("host vm (AMD EPYC 7B13, 2 threads, 1 usable)"), std::string::npos);
  EXPECT_NE(text.find("- **Warning:** other processes used 37% of the 1 usable CPU during the run, "
                      "more than 10%: "),
            std::string::npos)
      << text;
}

TEST(MarkdownReportEnvironment, CommandRunSaysCommandArmsNotABackend) {
  ab::RunRecord record = testing::synthetic_record();
  record.experiment.backend = Backend::kNone;
  record.environment = host(Backend::kNone);
  record.environment.gpu = "2× NVIDIA H200";
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("(file `experiments/warps_and_stages.toml`) as command arms on host vm (AMD "
                      "EPYC 7B13, 2 threads; GPUs visible: 2× NVIDIA H200): 6 variants"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- **Environment.** Command arms, no kernel backend, on host vm (AMD EPYC "
                      "7B13, 2 threads); GPUs visible to the commands: 2× NVIDIA H200; commit "
                      "`0123456789ab`.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("backend:"), std::string::npos);
  EXPECT_EQ(text.find("on the cuda backend"), std::string::npos);
}

TEST(MarkdownReportEnvironment, CudaRunKeepsTheGpuAndAddsTheHost) {
  ab::RunRecord record = testing::synthetic_record();
  const ab::EnvironmentRecord cpu = host(Backend::kCuda);
  record.environment.cpu_model = cpu.cpu_model;
  record.environment.hardware_threads = cpu.hardware_threads;
  record.environment.usable_cpus = cpu.usable_cpus;
  record.environment.load_at_start = cpu.load_at_start;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("on the cuda backend, NVIDIA H200 (132 SMs): 6 variants"),
            std::string::npos);
  EXPECT_NE(text.find("CUDA runtime 13.0; commit `0123456789ab`; host gpu-node-7 (AMD EPYC "
                      "7B13, 2 threads); backend cuda.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("At the end: not read (the run had not ended)."), std::string::npos)
      << text;
}

TEST(MarkdownReportEnvironment, ARecordWithoutLoadReadingsSaysSo) {
  // Results of schema 1 predate the readings.
  EXPECT_NE(markdown_of(testing::synthetic_record()).find("- **Host load.** Not recorded.\n"),
            std::string::npos);
}

}  // namespace
}  // namespace mlalab::report
