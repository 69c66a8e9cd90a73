#include "report/markdown_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

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

// The simulation gives the verdicts it was built for; the report tests below rely on them.
TEST(MarkdownReport, SyntheticRecordHasTheIntendedVerdicts) {
  const ab::RunRecord& record = analysed();
  ASSERT_TRUE(record.analysis);
  EXPECT_EQ(variant_result(record, "8 warps")->verdict, ab::VariantVerdict::kRejected);
  EXPECT_EQ(variant_result(record, "3 stages")->verdict, ab::VariantVerdict::kMixed);
  EXPECT_EQ(variant_result(record, "3 stages")->faster_at, (std::vector<int>{1, 4}));
  EXPECT_EQ(variant_result(record, "3 stages")->slower_at, (std::vector<int>{64}));
  EXPECT_EQ(variant_result(record, "same code")->verdict, ab::VariantVerdict::kInconclusive);
  EXPECT_EQ(variant_result(record, "broken"), nullptr);  // INVALID: never analysed
  int ambiguous = 0;
  for (const auto& point : variant_result(record, "4 stages")->points) {
    ambiguous += point.judgement.verdict == ab::PointVerdict::kAmbiguous ? 1 : 0;
  }
  EXPECT_GT(ambiguous, 0);
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
  EXPECT_NE(text.find("Minimum effect 2%; α = 0.05, so intervals at 95% confidence"),
            std::string::npos);
  EXPECT_NE(text.find("NVIDIA H200 (132 SMs)"), std::string::npos);
  EXPECT_NE(text.find("driver 570.86.15 (CUDA 12.8); CUDA runtime 13.0; commit `0123456789ab`"),
            std::string::npos);
  EXPECT_NE(text.find("**Throttled samples excluded.** 2 of 480"), std::string::npos);
  EXPECT_NE(text.find("| round budget of 20 rounds spent |"), std::string::npos);
  EXPECT_NE(text.find("**Time taken.** 50.0 s, started 2025-06-01T12:00:00Z"),
            std::string::npos);
  EXPECT_NE(text.find("1, 4, 16, 64"), std::string::npos);
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
}

TEST(MarkdownReport, PerVariantTablesGiveChangeIntervalBandVerdictAndPrediction) {
  const ab::RunRecord& record = analysed();
  const std::string text = markdown_of(record);
  for (const char* heading : {"### 8 warps: REJECTED", "### 3 stages: MIXED",
                              "### same code: INCONCLUSIVE", "### 4 stages: ",
                              "### broken: INVALID"}) {
    EXPECT_NE(text.find(heading), std::string::npos) << heading;
  }
  const ab::PointResult& c1 = result_at(record, "8 warps", 1);
  EXPECT_NE(text.find(signed_percent(c1.evidence.change.change_pct) + " | " +
                      interval_text(c1.evidence.change.interval_pct)),
            std::string::npos);
  EXPECT_NE(text.find("| SLOWER "), std::string::npos);
  EXPECT_NE(text.find("| FASTER "), std::string::npos);
  EXPECT_NE(text.find("| WITHIN_NOISE "), std::string::npos);
  EXPECT_NE(text.find("Predicted +20%; measured "), std::string::npos);
  EXPECT_NE(text.find("INVALID (out[0][3][17] = nan, reference 0.25): never timed."),
            std::string::npos);
  // AMBIGUOUS points say how many rounds would settle them.
  for (const auto& point : variant_result(record, "4 stages")->points) {
    if (point.judgement.verdict != ab::PointVerdict::kAmbiguous) continue;
    const std::string expected =
        point.judgement.more_rounds
            ? fmt::format("AMBIGUOUS: ≈ {} more rounds", group_thousands(*point.judgement.more_rounds))
            : "AMBIGUOUS: no number of rounds expected to settle it";
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
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

TEST(MarkdownReport, MonotonicitySaysNoneWithoutDips) {
  const ab::RunRecord record = testing::synthetic_record({1000, 3800, 14000, 40000});
  EXPECT_NE(markdown_of(record).find("Dips: none."), std::string::npos);
}

TEST(MarkdownReport, ConclusionNamesEveryVerdictWithItsNumbers) {
  const std::string conclusion = conclusion_paragraph(analysed());
  EXPECT_NE(conclusion.find("8 warps: REJECTED, slower at every concurrency (" +
                            change_at("8 warps", 1) + " at C1 … " + change_at("8 warps", 64) +
                            " at C64); predicted +20%."),
            std::string::npos)
      << conclusion;
  // MIXED names the points of both directions.
  EXPECT_NE(conclusion.find("3 stages: MIXED, faster at C1 and C4 (" + change_at("3 stages", 1) +
                            " at C1, " + change_at("3 stages", 4) + " at C4) but slower at C64 (" +
                            change_at("3 stages", 64) +
                            " at C64), within noise at C16; predicted +5.0%."),
            std::string::npos)
      << conclusion;
  EXPECT_NE(conclusion.find("same code: INCONCLUSIVE, within noise at every concurrency"),
            std::string::npos);
  EXPECT_NE(conclusion.find("; no prediction."), std::string::npos);
  EXPECT_NE(conclusion.find("4 stages: INCONCLUSIVE"), std::string::npos);
  EXPECT_NE(conclusion.find("ambiguous at"), std::string::npos);
  EXPECT_NE(conclusion.find("broken: INVALID (out[0][3][17] = nan, reference 0.25): never timed."),
            std::string::npos);
  // One paragraph.
  EXPECT_EQ(conclusion.find('\n'), std::string::npos);
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
  EXPECT_NE(conclusion.find("(3 of 4 sweep points not measured); no prediction."),
            std::string::npos)
      << conclusion;
}

// Advice to run more rounds than the settings allow says so.
TEST(MarkdownReport, AmbiguousAdviceBeyondMaxRoundsSaysToRaiseIt) {
  ab::RunRecord record = analysed();
  record.experiment.stats.max_rounds = testing::kRounds;
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
ab::EnvironmentRecord host(std::string backend) {
  ab::EnvironmentRecord environment = testing::two_thread_host(std::move(backend));
  environment.load_at_start = {.load_1min = 0.34, .load_5min = 0.7, .load_15min = 0.4,
                               .other_cpu_share = 0.031, .share_window_s = 0.5};
  environment.load_at_end = {.load_1min = 1.95, .load_5min = 1.1, .load_15min = 0.62,
                             .other_cpu_share = 0.042, .share_window_s = 61.0};
  return environment;
}

ab::RunRecord cpu_run() {
  ab::RunRecord record = testing::synthetic_record();
  record.experiment.backend = "cpu";
  record.environment = host("cpu");
  return record;
}

TEST(MarkdownReportEnvironment, CpuRunNamesTheHostAndItsLoadAtStartAndEnd) {
  const std::string text = markdown_of(cpu_run());
  EXPECT_NE(text.find("Experiment `warps_and_stages` (file `experiments/warps_and_stages.toml`) "
                      "on the cpu backend, host vm (AMD EPYC 7B13, 2 threads): 5 variants"),
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
  record.experiment.backend = ab::kNoBackend;
  record.environment = host(ab::kNoBackend);
  record.environment.gpu = "2× NVIDIA H200";
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("(file `experiments/warps_and_stages.toml`) as command arms on host vm (AMD "
                      "EPYC 7B13, 2 threads; GPUs visible: 2× NVIDIA H200): 5 variants"),
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
  const ab::EnvironmentRecord cpu = host("cuda");
  record.environment.cpu_model = cpu.cpu_model;
  record.environment.hardware_threads = cpu.hardware_threads;
  record.environment.usable_cpus = cpu.usable_cpus;
  record.environment.load_at_start = cpu.load_at_start;
  const std::string text = markdown_of(record);
  EXPECT_NE(text.find("on the cuda backend, NVIDIA H200 (132 SMs): 5 variants"),
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
